import { inTurnOrder } from './claim-window.js';
import type { ClaimShares, TurnRequest } from './port.js';
import type { ClaimedDelivery } from './records.js';

/**
 * One bound a claim keeps: at most `cap` deliveries per key (or the key's own in `caps`, a
 * breaker's tighter one), counting `inFlight` ones.
 */
export interface PickLimit<T> {
  keyOf(delivery: T): string;
  cap: number;
  inFlight: ReadonlyMap<string, number>;
  caps?: ReadonlyMap<string, number> | undefined;
}

const capFor = <T>(l: PickLimit<T>, key: string) => l.caps?.get(key) ?? l.cap;

/**
 * The key of an account's requests at an origin (ClaimShares' `openByAccountAtOrigin`): the origin
 * first, which holds no space (a URL's origin), so that splitAccountAtOrigin can take it apart.
 */
export const accountAtOrigin = (accountId: string, origin: string) => `${origin} ${accountId}`;

/** accountAtOrigin's parts: [account id, origin]. */
export function splitAccountAtOrigin(key: string): [accountId: string, origin: string] {
  const space = key.indexOf(' ');
  return [key.slice(space + 1), key.slice(0, space)];
}

/**
 * A claimer's shares (design D25) as limits: its share of each account, of each origin, and of
 * each account at an origin, counting what it has open there, the caps given in place of a share
 * (ClaimShares' `capped`).
 */
export function shareLimits<T>(
  shares: ClaimShares,
  accountOf: (delivery: T) => string,
  originOf: (delivery: T) => string,
): { accounts: PickLimit<T>; origins: PickLimit<T>; accountsAtOrigins: PickLimit<T> } {
  return {
    accounts: { keyOf: accountOf, cap: shares.perAccount, inFlight: shares.openByAccount },
    origins: originShare(shares, originOf),
    accountsAtOrigins: {
      keyOf: (delivery) => accountAtOrigin(accountOf(delivery), originOf(delivery)),
      cap: shares.perAccountAtOrigin,
      inFlight: shares.openByAccountAtOrigin,
      caps: shares.capped?.accountsAtOrigins,
    },
  };
}

/** The origins' limit of shareLimits alone: a turn's cursor counts no other (turnCursor). */
function originShare<T>(shares: ClaimShares, originOf: (delivery: T) => string): PickLimit<T> {
  return {
    keyOf: originOf,
    cap: shares.perOrigin,
    inFlight: shares.openByOrigin,
    caps: shares.capped?.origins,
  };
}

/**
 * Which due deliveries a claim leases, for the store that picks in the process (SQLite;
 * PostgreSQL ranks in its claim statement to save round trips): in due order, at most `limit` in
 * all, and within every limit given (design I6: per endpoint; design D25: per account, per origin
 * and per account at an origin, this worker's share). A delivery over any limit is passed over,
 * never waited on, so a hanging endpoint, origin or account cannot hold up the others. It reads
 * `due` lazily and stops at `limit`, so a store can hand it rows it reads only as they are needed.
 */
export function pickDue<T>(due: Iterable<T>, limits: readonly PickLimit<T>[], limit: number): T[] {
  const picked: T[] = [];
  if (limit <= 0) return picked;
  const counts = limits.map((l) => new Map(l.inFlight));
  for (const delivery of due) {
    const keys = limits.map((l) => l.keyOf(delivery));
    if (limits.some((l, i) => (counts[i]!.get(keys[i]!) ?? 0) >= capFor(l, keys[i]!))) continue;
    limits.forEach((_, i) => {
      counts[i]!.set(keys[i]!, (counts[i]!.get(keys[i]!) ?? 0) + 1);
    });
    picked.push(delivery);
    if (picked.length >= limit) break;
  }
  return picked;
}

/** The keys already at their cap: a store leaves their deliveries out of what it reads. */
export function fullKeys<T>(limit: PickLimit<T>): string[] {
  const keys = new Set([...limit.inFlight.keys(), ...(limit.caps?.keys() ?? [])]);
  return [...keys].filter((key) => (limit.inFlight.get(key) ?? 0) >= capFor(limit, key));
}

/**
 * `due` (in due order) with the accounts taking turns (design D77): each account's first, in the
 * turn order after the cursor `after` (inTurnOrder), then each one's second, and so on; within an
 * account, due order. In the cursor's order, a share that cuts a turn short leaves out the accounts
 * the next turn starts with (turnCursor).
 */
export function inAccountTurns<T>(due: readonly T[], accountOf: (delivery: T) => string, after: string): T[] {
  const seen = new Map<string, number>();
  const turns = due.map((delivery, i) => {
    const account = accountOf(delivery);
    const turn = seen.get(account) ?? 0;
    seen.set(account, turn + 1);
    return { delivery, account, turn, i };
  });
  const order = new Map(inTurnOrder(seen.keys(), after).map((account, n) => [account, n]));
  const rank = (t: (typeof turns)[number]) => order.get(t.account)!;
  return turns.sort((x, y) => x.turn - y.turn || rank(x) - rank(y) || x.i - y.i).map((t) => t.delivery);
}

/**
 * The cursor of the turn after one that took `took`, with `after` its own: the last account taken
 * in its turn order, so that the next turn starts with the accounts after it. Over turns, every
 * account with something due takes one, however many more are due than a turn takes (as many
 * accounts as the claim may take). An origin the turn left full (`origins`: their share or the
 * cap in its place, counting what the claimer had open there before the turn) may have left out
 * accounts after the last one it took there, while accounts at other origins after them were
 * taken: the cursor then stops at that last one, so the next turn starts with those left out.
 *
 * `readTo`: where the store's read after the cursor stopped, when the turn chose every account it
 * found past the cursor (turnReadTo). The accounts past it were not read:
 * the cursor goes there, rather than back to an account from the first id on, so that over turns
 * the reads reach every account however many endpoints come before it; or, stopped at a full
 * origin before it, no further than that. Unchanged when the turn took none and nothing was read
 * past.
 */
export function turnCursor<T>(
  after: string,
  took: readonly T[],
  accountOf: (delivery: T) => string,
  origins?: PickLimit<T>,
  readTo?: string,
): string {
  const order = inTurnOrder(new Set(took.map(accountOf)), after);
  if (order.length === 0) return readTo ?? after;
  const at = new Map(order.map((account, i) => [account, i]));
  let cursor = order.length - 1;
  let full = false;
  if (origins) {
    const held = new Map(origins.inFlight);
    const lastAt = new Map<string, number>();
    for (const t of took) {
      const key = origins.keyOf(t);
      held.set(key, (held.get(key) ?? 0) + 1);
      lastAt.set(key, Math.max(lastAt.get(key) ?? -1, at.get(accountOf(t))!));
    }
    for (const [key, last] of lastAt) {
      if (held.get(key)! < capFor(origins, key)) continue;
      full = true;
      cursor = Math.min(cursor, last);
    }
  }
  const last = order[cursor]!;
  if (readTo === undefined) return last;
  // In turn order, readTo (after the cursor) comes before any account from the first id on. A
  // full origin may have left out accounts after its last one, the turn's last among them.
  return full && last > after && last < readTo ? last : readTo;
}

/**
 * ClaimedTurn's `next` for the turn `request` asked for, which took `took`: turnCursor, with the
 * origins' shares the request gave and `readTo`, where the turn's read after its cursor stopped
 * when there is such a place (turnReadTo).
 */
export function nextTurnCursor(
  request: TurnRequest,
  took: readonly ClaimedDelivery[],
  readTo?: string,
): string {
  const accountOf = (c: ClaimedDelivery) => c.delivery.accountId;
  const origins = request.shares && originShare<ClaimedDelivery>(request.shares, (c) => c.origin);
  return turnCursor(request.after, took, accountOf, origins, readTo);
}
