/**
 * The claim (design I3, I6): leases a batch of due deliveries. It picks in the process (pickDue)
 * from pages (up to three) of the due rows' keys, or with the accounts in turn from the endpoints'
 * own first ones (design D77), then reads what an attempt needs of the picked ones:
 * ranking per endpoint in SQL (a window function over the whole window, then a second sort) cost
 * twice as much per delivery.
 */
import { CLAIMABLE_STATUSES } from '../../domain/delivery-state.js';
import {
  claimWalk,
  claimWindow,
  headsPerEndpoint,
  nothingToClaim,
  turnEndpoints,
  turnEndpointsPerAccount,
  turnReadTo,
} from '../claim-window.js';
import { newLeaseToken } from '../lease.js';
import {
  fullKeys,
  inAccountTurns,
  nextTurnCursor,
  type PickLimit,
  pickDue,
  shareLimits,
  splitAccountAtOrigin,
} from '../pick-due.js';
import type { ClaimedTurn, ClaimRequest, TurnRequest } from '../port.js';
import type { ClaimedDelivery } from '../records.js';
import { bodiesOf, type Row, toClaimed } from '../rows.js';
import { attemptColumnsSql, CLAIMABLE_SQL, isQueuedSql, sqlString } from '../sql-rules.js';
import { countParam, type SqliteDb } from './database.js';
import { dropDue, settleDue } from './endpoint-due.js';
import type { WriteQueue } from './write-queue.js';

/**
 * The endpoint of each live lease, from the leased rows' index alone (the partial index
 * `deliveries_leased`, which holds the endpoint; without INDEXED BY the planner scans every
 * delivery ever made). Counted per endpoint in the process: grouped in SQL (a sort of every lease),
 * or read with each row's id and token from the table, the count cost a claim with 1,000 in flight
 * more than the rest of it.
 */
export const LEASED = `
SELECT endpoint_id FROM deliveries INDEXED BY deliveries_leased
WHERE lease_expires_at IS NOT NULL AND lease_expires_at > @now`;

/**
 * Of the leases named in `@finishing` (a JSON array of [delivery id, token]), the live ones, each
 * row once, with its endpoint: they hold but are not in flight (their requests are over and their
 * records are on the way), so LEASED's count less these is what is in flight (it may be 0).
 */
export const FINISHING = `
SELECT d.endpoint_id FROM deliveries d
WHERE (d.id, d.lease_token) IN (
    SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(@finishing))
  AND d.lease_expires_at > @now`;

/**
 * The claimable deliveries due by `@now` and not in flight, in due order, from the due-time index
 * alone: it holds each one's lease expiry and status (migration 16), so the deliveries in flight,
 * the queue's first rows, are stepped past there and never read from the table.
 */
const DUE_IN_ORDER = `
FROM deliveries INDEXED BY deliveries_due
WHERE status IN ${CLAIMABLE_SQL} AND next_attempt_at <= @now
  AND (lease_expires_at IS NULL OR lease_expires_at <= @now)
ORDER BY next_attempt_at`;

/** The accounts at their share of an origin (`@fullAtOrigins`, a JSON array of [account, origin]). */
const FULL_AT_ORIGINS = `SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(@fullAtOrigins)`;

/**
 * Due deliveries of endpoints enabled and not paused, not leased, in due order: only what picking
 * reads (a disabled or paused endpoint's not yet held are passed over: settle-queue.ts).
 * Endpoints at their cap (`@full`), and accounts, origins and accounts at an origin at the
 * claimer's share (`@fullAccounts`, `@fullOrigins`, `@fullAtOrigins`; JSON arrays) are left out
 * here, so the window holds what may be taken. The rows passed over still cost a step of the walk
 * each, so the walk follows the due-time index for at most `@walk` rows not in flight (claimWalk),
 * and stops after `@skip` and `@window` more rows it may take (a page of the claim's window,
 * claimWindow): a claim is bounded by what is due and in flight, never by the table, nor by a
 * backlog it cannot take now (SELECT_HEADS reads past that). Only the rows the walk reaches are
 * read from the table, by rowid. Ties in due time come in index order: those not leased first, then
 * by lease expiry, then by status, then in insertion (rowid) order; no invariant depends on it.
 */
export const SELECT_DUE = `
SELECT d.id, d.endpoint_id, d.account_id, e.origin AS origin
FROM (SELECT rowid AS r, next_attempt_at ${DUE_IN_ORDER} LIMIT ${countParam('walk')}) w
CROSS JOIN deliveries d ON d.rowid = w.r -- in this order
JOIN endpoints e ON e.id = d.endpoint_id AND e.enabled = 1 AND e.paused = 0
WHERE d.endpoint_id NOT IN (SELECT value FROM json_each(@full))
  AND d.account_id NOT IN (SELECT value FROM json_each(@fullAccounts))
  AND e.origin NOT IN (SELECT value FROM json_each(@fullOrigins))
  AND (d.account_id, e.origin) NOT IN (${FULL_AT_ORIGINS})
ORDER BY w.next_attempt_at
LIMIT ${countParam('window')} OFFSET ${countParam('skip')}`;

/** A due delivery past the walk's `@walk` rows: the walk was cut short, not out of due rows. */
export const DUE_PAST_WALK = `SELECT 1 ${DUE_IN_ORDER} LIMIT 1 OFFSET ${countParam('walk')}`;

/**
 * When deliveries this claim may not take fill the walk (a tenant's backlog behind its endpoints,
 * account or origin at their limits), the endpoints that may give it more are read from each
 * endpoint's next due time (endpoint-due.ts), in due order, at most `@scan` of them: endpoints whose
 * queued deliveries are not due yet cost nothing, however many (each one's seek into its queued
 * deliveries took 64 ms at 20,000 endpoints holding a retry each). Endpoints at their cap, or whose
 * account or origin is at the claimer's share, are left out before the limit (they keep their
 * entries); `live`: enabled and not paused.
 *
 * Endpoints with a live lease (`@leased`, a JSON array: LEASED) keep their entries (a lease that
 * runs out makes its delivery claimable with no write), so they are read apart (DUE_IN_FLIGHT, at
 * most `@scan` more): the ones with a due delivery no one holds. In one due order with the others, more of
 * them than `@scan` (a tenant's hanging endpoints, held by other workers) filled the read, and every
 * other tenant's delivery waited until their requests ended.
 */
const NOT_FULL = `
  AND e.id NOT IN (SELECT value FROM json_each(@full))
  AND e.account_id NOT IN (SELECT value FROM json_each(@fullAccounts))
  AND e.origin NOT IN (SELECT value FROM json_each(@fullOrigins))
  AND (e.account_id, e.origin) NOT IN (${FULL_AT_ORIGINS})`;
export const DUE_ENDPOINTS = `
SELECT e.id, e.enabled = 1 AND e.paused = 0 AS live, e.account_id, q.next_due_at
FROM endpoint_due q INDEXED BY endpoint_due_by_time CROSS JOIN endpoints e -- in this order
WHERE q.next_due_at <= @now AND e.id = q.endpoint_id${NOT_FULL}
  AND e.id NOT IN (SELECT value FROM json_each(@leased))
ORDER BY q.next_due_at
LIMIT ${countParam('scan')}`;
/**
 * For a turn, the endpoints with something due among the first `@scan` endpoints in account-id order
 * after the turn's cursor `@after`, then from the first id on (as inTurnOrder orders accounts), by
 * the endpoints' index by account and each one's entry by key: `@perAccount` of each account's, for
 * as many accounts as make `@found` (as many as the turn reads: turnEndpoints), the first in that
 * order. The accounts a turn takes next are read so, whatever is due before them: DUE_ENDPOINTS
 * alone, in due order, read none past its `@scan` entries, so tenants with more endpoints than that,
 * all due first, kept every other one out of the turns until their backlogs had gone out. Endpoints
 * with nothing due cost a step each, so the read stays bounded however many endpoints there are.
 * The turn reads DUE_ENDPOINTS's too, which may hold some of these again.
 */
export const DUE_AFTER_CURSOR = `
SELECT id, live, account_id, next_due_at FROM (
  SELECT e.id, 1 AS live, e.account_id, q.next_due_at, w.part,
         row_number() OVER (PARTITION BY e.account_id ORDER BY e.id) AS rn
  FROM (
    SELECT id, 0 AS part FROM (
      SELECT id FROM endpoints INDEXED BY endpoints_by_account
      WHERE account_id > @after ORDER BY account_id, id LIMIT ${countParam('scan')})
    UNION ALL
    SELECT id, 1 AS part FROM (
      SELECT id FROM endpoints INDEXED BY endpoints_by_account
      WHERE account_id <= @after ORDER BY account_id, id LIMIT ${countParam('scan')})
    LIMIT ${countParam('scan')}
  ) w
  CROSS JOIN endpoint_due q CROSS JOIN endpoints e -- in this order
  WHERE q.endpoint_id = w.id AND q.next_due_at <= @now AND e.id = w.id AND e.enabled = 1 AND e.paused = 0${NOT_FULL}
    AND e.id NOT IN (SELECT value FROM json_each(@leased))
)
WHERE rn <= ${countParam('perAccount')}
ORDER BY part, account_id, id
LIMIT ${countParam('found')}`;
/**
 * The accounts of the `@edge`-th and next endpoints after the cursor `@after` in account-id order
 * (0-based: the last DUE_AFTER_CURSOR reads and the first it does not, when there are), and the
 * last account before the former: where that read stopped (turnReadTo).
 */
const READ_EDGE = `
SELECT account_id FROM endpoints INDEXED BY endpoints_by_account
WHERE account_id > @after ORDER BY account_id, id LIMIT 2 OFFSET ${countParam('edge')}`;
const ACCOUNT_BEFORE = `
SELECT max(account_id) FROM endpoints INDEXED BY endpoints_by_account
WHERE account_id > @after AND account_id < @account`;

/**
 * Where DUE_AFTER_CURSOR's read after `after` stopped, when it stopped at its bound `scan` before
 * the last account: the last account it read every endpoint of, or the one it stopped in when no
 * account before it was read.
 */
function readStoppedAt(db: SqliteDb, after: string, scan: number): string | undefined {
  const edge = db
    .st(READ_EDGE)
    .pluck()
    .all({ after, edge: scan - 1 }) as string[];
  if (edge.length < 2) return undefined;
  const [last, next] = edge as [string, string];
  if (next !== last) return last;
  return (db.st(ACCOUNT_BEFORE).pluck().get({ after, account: last }) as string | null) ?? last;
}

export const DUE_IN_FLIGHT = `
SELECT e.id, e.enabled = 1 AND e.paused = 0 AS live, e.account_id, q.next_due_at
FROM json_each(@leased) f CROSS JOIN endpoint_due q CROSS JOIN endpoints e -- in this order
WHERE q.endpoint_id = f.value AND q.next_due_at <= @now AND e.id = q.endpoint_id${NOT_FULL}
  AND (${CLAIMABLE_STATUSES.map(
    // One seek per status, as SELECT_HEADS: a list there could make the seek walk held rows too.
    (status) => `EXISTS (
    SELECT 1 FROM deliveries h INDEXED BY deliveries_queued_by_endpoint
    WHERE h.endpoint_id = e.id AND h.status = ${sqlString(status)} AND ${isQueuedSql('h.status')}
      AND h.next_attempt_at <= @now
      AND (h.lease_expires_at IS NULL OR h.lease_expires_at <= @now))`,
  ).join(' OR ')})
ORDER BY q.next_due_at
LIMIT ${countParam('scan')}`;

/**
 * The first `@perEndpoint` due, unleased deliveries of status `@status` of each endpoint of
 * `@endpoints` (DUE_ENDPOINTS, a JSON array), each read from the endpoint's queued deliveries by
 * status and due time (migration 13).
 */
export const SELECT_HEADS = `
SELECT d.id, d.endpoint_id, d.account_id, e.origin AS origin, d.next_attempt_at
FROM json_each(@endpoints) q CROSS JOIN endpoints e CROSS JOIN deliveries d
WHERE e.id = q.value AND d.id IN (
    SELECT h.id FROM deliveries h INDEXED BY deliveries_queued_by_endpoint
    WHERE h.endpoint_id = e.id AND h.status = @status AND ${isQueuedSql('h.status')}
      AND h.next_attempt_at <= @now
      AND (h.lease_expires_at IS NULL OR h.lease_expires_at <= @now)
    ORDER BY h.next_attempt_at
    LIMIT ${countParam('perEndpoint')})`;

/**
 * What an attempt needs of the picked deliveries (a JSON array of ids), in the order picked, read
 * after picking: the walk passes over about three rows for each it takes (endpoints fill up within
 * one claim), and reading every one's body with it cost more than this second statement. The
 * bodies come apart (SELECT_BODIES).
 */
export const SELECT_PICKED = `
SELECT d.*, ${attemptColumnsSql('@now')}
FROM json_each(@ids) picked
JOIN deliveries d ON d.id = picked.value
JOIN endpoints e ON e.id = d.endpoint_id
ORDER BY picked.key`;

/** The bodies of the events named (a JSON array of ids), each once (design D72). */
export const SELECT_BODIES = `
SELECT ev.id AS event_id, ev.body FROM json_each(@ids) named CROSS JOIN events ev ON ev.id = named.value`;

/** The picked deliveries (`ids`, a JSON array) as a claim hands them out, leased with `lease`. */
export function readClaimed(
  db: SqliteDb,
  now: number,
  ids: string,
  lease: [token: string, expiresAt: number],
): ClaimedDelivery[] {
  const picked = db.st(SELECT_PICKED).all({ now, ids }) as Row[];
  const events = JSON.stringify([...new Set(picked.map((row) => row.event_id as string))]);
  return toClaimed(picked, lease, bodiesOf(db.st(SELECT_BODIES).all({ ids: events }) as Row[]));
}

/**
 * SELECT_DUE's rows in pages, each read only once picking has used up those before it, never
 * through a cursor (database.ts): as many as the claim takes, all it reads when picking passes none
 * over; as many again, enough when it passes a few over; then the rest of its `window`. `read.n`
 * counts the rows read. Exported for its test.
 */
export function* duePages(
  db: SqliteDb,
  params: Record<string, unknown>,
  limit: number,
  window: number,
  read: { n: number },
): Generator<Row> {
  for (const size of [limit, limit, window - 2 * limit]) {
    const page = db.st(SELECT_DUE).all({ ...params, window: size, skip: read.n }) as Row[];
    read.n += page.length;
    yield* page;
    if (page.length < size) return;
  }
}

interface DueEndpoint {
  id: string;
  live: number;
  account_id: string;
  next_due_at: number;
}

/**
 * SELECT_HEADS for each claimable status of the DUE_ENDPOINTS that may take more, in due order (then
 * id); with `turn`, of those and DUE_AFTER_CURSOR's, those a claim with the accounts in turn reads
 * (turnEndpoints): after its cursor, the accounts it takes may be any of those due, so the whole
 * `@scan` of each is read. An entry read
 * as due whose endpoint has nothing to take now is settled (endpoint-due.ts), and dropped when the
 * endpoint is disabled or paused (re-enabling and resuming lower it again).
 */
function headsOf(
  db: SqliteDb,
  params: Record<string, unknown>,
  turn?: { accounts: number; perAccount: number; after: string },
): { heads: Row[]; readTo?: string | undefined } {
  const inFlight = db.st(DUE_IN_FLIGHT).all(params) as DueEndpoint[];
  const found = [...(db.st(DUE_ENDPOINTS).all(params) as DueEndpoint[]), ...inFlight];
  // A turn's read after its cursor, as many rows as it reads of accounts; the last account of its
  // rows when they filled that.
  let filledTo: string | undefined;
  if (turn) {
    const most = turn.accounts * turn.perAccount;
    const pastCursor = db
      .st(DUE_AFTER_CURSOR)
      .all({ ...params, after: turn.after, perAccount: turn.perAccount, found: most }) as DueEndpoint[];
    if (pastCursor.length >= most) filledTo = pastCursor.at(-1)?.account_id;
    const read = new Set(found.map((f) => f.id));
    for (const f of pastCursor) if (!read.has(f.id)) found.push(f);
  }
  let live: DueEndpoint[] = [];
  let readTo: string | undefined;
  for (const f of found) {
    if (f.live === 1) live.push(f);
    else dropDue(db, f.id);
  }
  if (turn) {
    live.sort((a, b) => a.next_due_at - b.next_due_at || (a.id < b.id ? -1 : 1));
    const chosen = turnEndpoints(live, (f) => f.account_id, turn.accounts, turn.perAccount, turn.after);
    live = chosen.endpoints;
    // With as many endpoints in flight as it reads, one past the cursor may have gone unread.
    const scan = params.scan as number;
    readTo = turnReadTo(
      turn.after,
      chosen.leftOut,
      () => (inFlight.length < scan ? readStoppedAt(db, turn.after, scan) : undefined),
      filledTo,
    );
  }
  const ids = live.map((f) => f.id);
  if (ids.length === 0) return { heads: [], readTo };
  const endpoints = JSON.stringify(ids);
  const heads = CLAIMABLE_STATUSES.flatMap(
    (status) => db.st(SELECT_HEADS).all({ ...params, endpoints, status }) as Row[],
  );
  const taking = new Set(heads.map((h) => h.endpoint_id as string));
  for (const id of ids) if (!taking.has(id)) settleDue(db, id, params.now as number);
  const due = (r: Row) => r.next_attempt_at as number;
  heads.sort((a, b) => due(a) - due(b) || ((a.id as string) < (b.id as string) ? -1 : 1));
  return { heads, readTo };
}

/** Leases the claimed ids (a JSON array) under one token: one statement for the whole batch. */
export const LEASE_DELIVERIES = `
UPDATE deliveries SET lease_token = @token, lease_expires_at = @expiresAt
WHERE id IN (SELECT value FROM json_each(@ids))`;

/**
 * A write of the turn's transaction (write-queue.ts): a claim made as attempts end shares their
 * records' commit. Answers the claims in due order and those with the accounts in turn.
 */
export function claims(db: SqliteDb, write: WriteQueue) {
  /** What a claim leased, and with `after` (a turn's cursor), where its read after it stopped. */
  const claimOnce = (
    { now, limit, leaseMs, perEndpointCap: cap, finishing = [], shares }: ClaimRequest,
    after?: string,
  ): { claimed: ClaimedDelivery[]; readTo?: string | undefined } => {
    // Each endpoint with a live lease, and how many of its deliveries are in flight (0 when every
    // lease it holds is being recorded).
    const inFlight = new Map<string, number>();
    const count = (ids: string[], by: number) => {
      for (const id of ids) inFlight.set(id, (inFlight.get(id) ?? 0) + by);
    };
    count(db.st(LEASED).pluck().all({ now }) as string[], 1);
    if (finishing.length > 0) {
      const named = JSON.stringify(finishing.map((f) => [f.deliveryId, f.leaseToken]));
      count(db.st(FINISHING).pluck().all({ now, finishing: named }) as string[], -1);
    }
    const limits: PickLimit<Row>[] = [
      { keyOf: (row) => row.endpoint_id as string, cap, inFlight, caps: shares?.capped?.endpoints },
    ];
    if (shares) {
      const share = shareLimits<Row>(
        shares,
        (row) => row.account_id as string,
        (row) => row.origin as string,
      );
      limits.push(share.accounts, share.origins, share.accountsAtOrigins);
    }
    const [endpoints, accounts = [], origins = [], atOrigins = []] = limits.map((l) => fullKeys(l));
    const window = claimWindow(limit);
    const params = {
      now,
      full: JSON.stringify(endpoints),
      fullAccounts: JSON.stringify(accounts),
      fullOrigins: JSON.stringify(origins),
      fullAtOrigins: JSON.stringify(atOrigins.map(splitAccountAtOrigin)),
      // The deliveries in flight take no step of the walk: the index steps past them.
      walk: claimWalk(window),
    };
    // Each endpoint that may take more gives its own first ones.
    const heads = (inTurn?: Parameters<typeof headsOf>[2]) =>
      headsOf(
        db,
        {
          ...params,
          leased: JSON.stringify([...inFlight.keys()]),
          perEndpoint: headsPerEndpoint(limit, cap),
          scan: params.walk,
        },
        inTurn,
      );
    let rows: Row[];
    let readTo: string | undefined;
    if (after !== undefined) {
      const read = heads({ after, accounts: limit, perAccount: turnEndpointsPerAccount(limit, cap) });
      readTo = read.readTo;
      rows = pickDue(
        inAccountTurns(read.heads, (row) => row.account_id as string, after),
        limits,
        limit,
      );
    } else {
      const read = { n: 0 };
      rows = pickDue(duePages(db, params, limit, window, read), limits, limit);
      // Short, with the walk out of rows before its window and due rows past it: what it walked is
      // held by deliveries this claim may not take. The endpoints' own first ones instead, among
      // them every one the walk found that picking could take, so the walk's picks are made again.
      if (rows.length < limit && read.n < window && db.st(DUE_PAST_WALK).get(params)) {
        rows = pickDue(heads().heads, limits, limit);
      }
    }
    if (rows.length === 0) return { claimed: [], readTo };
    // One token for the batch: a lease is the pair (delivery, token), unique per claim all the same.
    const token = newLeaseToken();
    const expiresAt = now + leaseMs;
    // The same transaction as the walk, so every picked row is there (the foreign keys keep its
    // event and endpoint).
    const ids = JSON.stringify(rows.map((r) => r.id));
    const claimed = readClaimed(db, now, ids, [token, expiresAt]);
    db.st(LEASE_DELIVERIES).run({ token, expiresAt, ids });
    return { claimed, readTo };
  };
  // Nothing to take (nothingToClaim): no turn's wait, no transaction.
  return {
    claimDue: async (request: ClaimRequest): Promise<ClaimedDelivery[]> =>
      nothingToClaim(request) ? [] : (await write(() => claimOnce(request))).value.claimed,
    claimTurn: async (request: TurnRequest): Promise<ClaimedTurn> => {
      if (nothingToClaim(request)) return { claimed: [], next: request.after };
      const { claimed, readTo } = (await write(() => claimOnce(request, request.after))).value;
      return { claimed, next: nextTurnCursor(request, claimed, readTo) };
    },
  };
}
