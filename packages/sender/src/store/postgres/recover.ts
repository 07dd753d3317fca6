/**
 * Recovery (design D35): an endpoint's failed deliveries created in a time range get one more
 * attempt each, the oldest first, at most `limit` per call. The walk follows the partial index of
 * failed deliveries, so it costs what it recovers, never the endpoint's whole log. The endpoint is
 * share-locked, so it cannot be disabled or paused while its deliveries are set due.
 */

import { attemptFallsOut } from '../../domain/attempts-kept.js';
import type { FailedRange, RecoverRequest, RecoverResult } from '../port.js';
import { deleteAttemptsPastKeptSql, KEPT_ENDPOINT_SQL, RESUME_STATUS_SQL } from '../sql-rules.js';
import type { Pg } from './connection.js';
import { madeClaimable } from './endpoint-due.js';

const LOCK_ENDPOINT_SHARED = `SELECT enabled, paused FROM endpoints WHERE id = $1 AND account_id = $2 AND ${KEPT_ENDPOINT_SQL} FOR SHARE`;
/**
 * MATERIALIZED: the locking, limited walk runs exactly once. As a subquery of the UPDATE it may run
 * again per row, skip the rows this statement already changed, and take the next ones past the limit.
 */
export const RECOVER = `
WITH targets AS MATERIALIZED (
  SELECT id FROM deliveries
  WHERE endpoint_id = $1 AND status = 'failed' AND created_at >= $2 AND created_at < $3
  ORDER BY created_at LIMIT $5 FOR UPDATE
)
UPDATE deliveries d SET status = ${RESUME_STATUS_SQL}, next_attempt_at = $4, updated_at = $4
FROM targets t WHERE d.id = t.id
RETURNING d.id, d.attempts`;
const DROP_PAST_KEPT = deleteAttemptsPastKeptSql('$1', '$2::int');
/** Counted through the same index, no further than `$4` entries. */
export const COUNT_FAILED = `
SELECT count(*)::int AS n FROM (
  SELECT 1 FROM deliveries
  WHERE endpoint_id = $1 AND status = 'failed' AND created_at >= $2 AND created_at < $3
  LIMIT $4) AS counted`;

export async function recoverDeliveries(
  pg: Pg,
  accountId: string,
  id: string,
  r: RecoverRequest,
): Promise<RecoverResult> {
  return pg.durableTx(async (client): Promise<RecoverResult> => {
    const [endpoint] = (await client.query(LOCK_ENDPOINT_SHARED, [id, accountId])).rows;
    if (!endpoint) return { ok: false, reason: 'not_found' };
    if (!endpoint.enabled) return { ok: false, reason: 'endpoint_disabled' };
    if (endpoint.paused) return { ok: false, reason: 'endpoint_paused' };
    const rows = (
      await client.query<{ id: string; attempts: number }>(RECOVER, [id, r.since, r.until, r.now, r.limit])
    ).rows;
    // One statement a delivery: few have a hundred attempts, and each runs its range once.
    for (const row of rows)
      if (attemptFallsOut(row.attempts)) await client.query(DROP_PAST_KEPT, [row.id, row.attempts]);
    if (rows.length > 0) await madeClaimable(client, pg.schema, id, r.now);
    return { ok: true, recovered: rows.length };
  });
}

export async function countFailedDeliveries(pg: Pg, id: string, range: FailedRange): Promise<number> {
  const [row] = await pg.rows(COUNT_FAILED, [id, range.since, range.until, range.atMost]);
  return Number(row?.n ?? 0);
}
