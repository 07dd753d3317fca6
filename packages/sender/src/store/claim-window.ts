import type { ClaimRequest } from './port.js';

/** A claim that can take nothing (no slot, or no delivery an endpoint may have in flight): a store answers it without a read. */
export const nothingToClaim = ({ limit, perEndpointCap }: ClaimRequest): boolean =>
  limit <= 0 || perEndpointCap <= 0;

/**
 * How many due rows a claim reads per call (SQLite SELECT_DUE, over up to three pages; PostgreSQL
 * CLAIM_WALK and CLAIM_DUE): enough for a full batch when several endpoints share the front of the queue, few
 * enough that a claim stays cheap however long the backlog. Fewer than `limit` may come back; the
 * next claim continues. The endpoints' cap plays no part: sized by it once it passed half the
 * batch (eight caps), a cap of 1,000 made every claim read and lock 8,000 rows to take at most 32
 * (4.7 s a claim on PostgreSQL).
 */
export const claimWindow = (limit: number): number => Math.max(limit * 4, 64);

/**
 * How many due rows a claim walks at most to find its window. The walk steps over what it may not
 * take: deliveries whose endpoint, account, origin or account at that origin is at its limit (and
 * those in flight). Past this bound, it reads each endpoint's own due deliveries instead (design
 * D25). Under load a walk passes over about three rows for each it takes, well inside the bound. The deliveries in flight
 * take none of these steps: PostgreSQL's walk adds a step for each (walkSteps), SQLite's steps past
 * them within the due-time index.
 */
export const claimWalk = (window: number): number => window * 8;

/**
 * Up to this many walks more, a step for each delivery in flight: those are the queue's first
 * rows (a claim takes the earliest due), passed over at every claim. With more in flight than a
 * walk (many workers or processes, each request out on its own endpoint), every claim was cut short
 * and read the endpoints one by one instead: 30–37 ms a claim on PostgreSQL with 1,000 in flight,
 * 6 ms once the walk steps past them. This is PostgreSQL's walk, whose leases are rows of their
 * own; SQLite's due-time index holds each lease's expiry, so its walk steps past the deliveries in
 * flight there and they take none of its steps.
 */
export const IN_FLIGHT_WALKS = 4;

/** The walk's steps with `inFlight` deliveries leased (claimWalk, IN_FLIGHT_WALKS). */
export const walkSteps = (window: number, inFlight: number): number =>
  claimWalk(window) + Math.min(inFlight, IN_FLIGHT_WALKS * claimWalk(window));

/**
 * How many of an endpoint's own due deliveries (per status) a held-up claim reads: its cap, but no
 * more than the batch, all a claim takes from one endpoint. Up to the cap alone, a cap of 1,000
 * read every due delivery of each endpoint it looked at.
 */
export const headsPerEndpoint = (limit: number, cap: number): number => Math.min(cap, limit);

/**
 * How many of an account's endpoints with something due a claim with the accounts in turn reads
 * (design D77), the earliest due first: enough for the whole batch from one account (an endpoint
 * gives at most headsPerEndpoint), however many more it has. Read for at most `limit` accounts (each
 * account's first fills the batch). With every endpoint read, a turn cost 5–6 ms on SQLite with
 * 1,000 endpoints due, against 0.4 ms for a claim in due order; so, 3.0 ms (3.5 ms on 2,000, and
 * 5.6 to 6.2 ms there since a turn also reads the endpoints after its cursor).
 */
export const turnEndpointsPerAccount = (limit: number, cap: number): number =>
  Math.ceil(limit / headsPerEndpoint(limit, cap));

/**
 * Of `due` (endpoints with something due, in due order), those a turn reads: the first `perAccount`
 * of each account, for `accounts` accounts, those whose id comes after `after` (the turn's cursor,
 * turnCursor), then from the first id on (inTurnOrder). `leftOut`: an account past the cursor was
 * not among them (turnReadTo).
 */
export function turnEndpoints<T>(
  due: readonly T[],
  accountOf: (endpoint: T) => string,
  accounts: number,
  perAccount: number,
  after: string,
): { endpoints: T[]; leftOut: boolean } {
  const order = inTurnOrder(new Set(due.map(accountOf)), after);
  const chosen = new Set(order.slice(0, accounts));
  // The accounts past the cursor come first in the turn's order.
  const leftOut = order.length > accounts && order[accounts]! > after;
  const taken = new Map<string, number>();
  const endpoints = due.filter((endpoint) => {
    const account = accountOf(endpoint);
    const n = taken.get(account) ?? 0;
    if (!chosen.has(account) || n >= perAccount) return false;
    taken.set(account, n + 1);
    return true;
  });
  return { endpoints, leftOut };
}

/**
 * Where a turn's read after its cursor `after` stopped, for the next turn's cursor (nextTurnCursor):
 * nothing when the turn left out an account with something due it found past the cursor
 * (`leftOut`, turnEndpoints), since the next turn is to start with it; else `stop()`, where the
 * read met its bound before the last account (none when it did not; read only when it is needed),
 * no further than `filledTo`, the last account of the read's rows when they filled what it reads.
 */
export function turnReadTo(
  after: string,
  leftOut: boolean,
  stop: () => string | undefined,
  filledTo?: string,
): string | undefined {
  if (leftOut) return undefined;
  const stopped = stop();
  if (stopped === undefined) return undefined;
  return filledTo !== undefined && filledTo > after && filledTo < stopped ? filledTo : stopped;
}

/**
 * `accounts` in the order a turn after `after` takes them: the ids after it, then those up to it,
 * each part in id order: JavaScript's, by UTF-16 code units, as the SQLite store sorts them and, for
 * ids of ASCII characters (newId's, and most callers'), as PostgreSQL's turn compares them
 * (`COLLATE "C"`, by bytes). For others the two may differ: a cursor then starts elsewhere, which
 * only moves the rotation on.
 */
export function inTurnOrder(accounts: Iterable<string>, after: string): string[] {
  const byId = [...accounts].sort();
  const from = byId.findIndex((id) => id > after);
  return from <= 0 ? byId : [...byId.slice(from), ...byId.slice(0, from)];
}
