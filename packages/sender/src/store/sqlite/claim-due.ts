/**
 * The claim (design I3, I6): leases a batch of due deliveries. It picks in the process (pickDue)
 * from a cursor over the due rows' keys, then reads what an attempt needs of the picked ones:
 * ranking per endpoint in SQL (a window function over the whole window, then a second sort) cost
 * twice as much per delivery.
 */
import { claimWindow } from '../claim-window.js';
import { newLeaseToken } from '../lease.js';
import { fullKeys, type PickLimit, pickDue } from '../pick-due.js';
import type { ClaimRequest } from '../port.js';
import type { ClaimedDelivery } from '../records.js';
import { type Row, toClaimed } from '../rows.js';
import { attemptColumnsSql, CLAIMABLE_SQL } from '../sql-rules.js';
import type { SqliteDb } from './database.js';
import type { WriteQueue } from './write-queue.js';

/**
 * Deliveries in flight per endpoint, from the leased rows only (the partial index
 * `deliveries_leased`; without INDEXED BY the planner scans every delivery ever made to group
 * them). Leases named in `@finishing` (a JSON array of [delivery id, token]) are not in flight:
 * their requests are over and their records are on the way.
 */
const IN_FLIGHT = `
SELECT endpoint_id, count(*) AS n FROM deliveries INDEXED BY deliveries_leased
WHERE lease_expires_at IS NOT NULL AND lease_expires_at > @now
  AND (id, lease_token) NOT IN (
    SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(@finishing))
GROUP BY endpoint_id`;

/**
 * Due deliveries of enabled endpoints, not leased, in due order: only what picking reads.
 * Endpoints at their cap (`@full`), and accounts and origins at the claimer's share
 * (`@fullAccounts`, `@fullOrigins`; JSON arrays) are left out here, so the window holds what may
 * be taken. The rows passed over still cost a step of the walk each, bounded by what is due. The walk
 * follows the due-time index and stops after `@window` rows, so a claim is bounded by what is due,
 * never by the table. Ties in due time come in index (rowid) order: insertion order, which matches
 * id order within one process; no invariant depends on it.
 */
export const SELECT_DUE = `
SELECT d.id, d.endpoint_id, d.account_id, e.origin AS origin
FROM deliveries d INDEXED BY deliveries_due
JOIN endpoints e ON e.id = d.endpoint_id AND e.enabled = 1
WHERE d.status IN ${CLAIMABLE_SQL}
  AND d.next_attempt_at <= @now
  AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= @now)
  AND d.endpoint_id NOT IN (SELECT value FROM json_each(@full))
  AND d.account_id NOT IN (SELECT value FROM json_each(@fullAccounts))
  AND e.origin NOT IN (SELECT value FROM json_each(@fullOrigins))
ORDER BY d.next_attempt_at
LIMIT @window`;

/**
 * What an attempt needs of the picked deliveries (a JSON array of ids), in the order picked, read
 * after picking: the walk passes over about three rows for each it takes (endpoints fill up within
 * one claim), and reading every one's body with it cost more than this second statement.
 */
export const SELECT_PICKED = `
SELECT d.*, ${attemptColumnsSql('@now')}
FROM json_each(@ids) picked
JOIN deliveries d ON d.id = picked.value
JOIN endpoints e ON e.id = d.endpoint_id
JOIN events ev ON ev.id = d.event_id
ORDER BY picked.key`;

/** Leases the claimed ids (a JSON array) under one token: one statement for the whole batch. */
const LEASE_DELIVERIES = `
UPDATE deliveries SET lease_token = @token, lease_expires_at = @expiresAt
WHERE id IN (SELECT value FROM json_each(@ids))`;

/** A write of the turn's transaction (write-queue.ts): a claim made as attempts end shares their records' commit. */
export function claimDue(db: SqliteDb, write: WriteQueue) {
  const claimOnce = ({
    now,
    limit,
    leaseMs,
    perEndpointCap: cap,
    finishing = [],
    shares,
  }: ClaimRequest): ClaimedDelivery[] => {
    const counted = db.st(IN_FLIGHT).all({
      now,
      finishing: JSON.stringify(finishing.map((f) => [f.deliveryId, f.leaseToken])),
    }) as { endpoint_id: string; n: number }[];
    const inFlight = new Map(counted.map((r) => [r.endpoint_id, r.n]));
    const limits: PickLimit<Row>[] = [
      { keyOf: (row) => row.endpoint_id as string, cap, inFlight, caps: shares?.capped?.endpoints },
    ];
    if (shares) {
      limits.push(
        {
          keyOf: (row) => row.account_id as string,
          cap: shares.perAccount,
          inFlight: shares.openByAccount,
        },
        {
          keyOf: (row) => row.origin as string,
          cap: shares.perOrigin,
          inFlight: shares.openByOrigin,
          caps: shares.capped?.origins,
        },
      );
    }
    const [endpoints, accounts = [], origins = []] = limits.map((l) => fullKeys(l));
    const due = db.st(SELECT_DUE).iterate({
      now,
      full: JSON.stringify(endpoints),
      fullAccounts: JSON.stringify(accounts),
      fullOrigins: JSON.stringify(origins),
      window: claimWindow(limit, cap),
    }) as IterableIterator<Row>;
    let rows: Row[];
    try {
      rows = pickDue(due, limits, limit);
    } finally {
      due.return?.(); // an open cursor keeps the connection busy; picking may stop before the end
    }
    if (rows.length === 0) return [];
    // One token for the batch: a lease is the pair (delivery, token), unique per claim all the same.
    const token = newLeaseToken();
    const expiresAt = now + leaseMs;
    // The same transaction as the walk, so every picked row is there (the foreign keys keep its
    // event and endpoint).
    const ids = JSON.stringify(rows.map((r) => r.id));
    const claimed = db.st(SELECT_PICKED).all({ now, ids }) as Row[];
    db.st(LEASE_DELIVERIES).run({ token, expiresAt, ids });
    return claimed.map((row) => toClaimed(row, token, expiresAt));
  };
  // Nothing to take: no turn's wait, no transaction.
  return async (request: ClaimRequest): Promise<ClaimedDelivery[]> =>
    request.limit <= 0 ? [] : (await write(() => claimOnce(request))).value;
}
