/**
 * Recovery (design D35): an endpoint's failed deliveries created in a time range get one more
 * attempt each, the oldest first, at most `limit` per call. The walk follows the partial index of
 * failed deliveries, so it costs what it recovers, never the endpoint's whole log.
 */

import { attemptFallsOut } from '../../domain/attempts-kept.js';
import type { FailedRange, RecoverRequest, RecoverResult } from '../port.js';
import { deleteAttemptsPastKeptSql, KEPT_ENDPOINT_SQL, RESUME_STATUS_SQL } from '../sql-rules.js';
import { countParam, type SqliteDb } from './database.js';
import { lowerDue } from './endpoint-due.js';
import type { OffLoopReads } from './off-loop-reads.js';

const SELECT_ENDPOINT_STATE = `SELECT enabled, paused FROM endpoints WHERE id = ? AND account_id = ? AND ${KEPT_ENDPOINT_SQL}`;
const RECOVER = `
UPDATE deliveries SET status = ${RESUME_STATUS_SQL}, next_attempt_at = @now, updated_at = @now
WHERE id IN (
  SELECT id FROM deliveries INDEXED BY deliveries_failed
  WHERE endpoint_id = @id AND status = 'failed' AND created_at >= @since AND created_at < @until
  ORDER BY created_at LIMIT ${countParam('limit')})
RETURNING id, attempts`;
const DROP_PAST_KEPT = deleteAttemptsPastKeptSql('@id', '@attempts');
/** Counted through the same index, no further than `atMost` entries. */
const COUNT_FAILED = `
SELECT count(*) AS n FROM (
  SELECT 1 FROM deliveries INDEXED BY deliveries_failed
  WHERE endpoint_id = @id AND status = 'failed' AND created_at >= @since AND created_at < @until
  LIMIT ${countParam('atMost')})`;

export function recoverDeliveries(db: SqliteDb) {
  return db.immediate((accountId: string, id: string, r: RecoverRequest): RecoverResult => {
    const endpoint = db.st(SELECT_ENDPOINT_STATE).get(id, accountId) as
      | { enabled: number; paused: number }
      | undefined;
    if (!endpoint) return { ok: false, reason: 'not_found' };
    if (endpoint.enabled !== 1) return { ok: false, reason: 'endpoint_disabled' };
    if (endpoint.paused === 1) return { ok: false, reason: 'endpoint_paused' };
    const rows = db.st(RECOVER).all({ id, since: r.since, until: r.until, now: r.now, limit: r.limit }) as {
      id: string;
      attempts: number;
    }[];
    for (const row of rows) if (attemptFallsOut(row.attempts)) db.st(DROP_PAST_KEPT).run(row);
    if (rows.length > 0) lowerDue(db, id, r.now);
    return { ok: true, recovered: rows.length };
  });
}

/** Off the event loop: up to `atMost` index entries (100,000: about 5 ms). */
export async function countFailedDeliveries(reads: OffLoopReads, id: string, range: FailedRange) {
  const row = await reads.get(COUNT_FAILED, {
    id,
    since: range.since,
    until: range.until,
    atMost: range.atMost,
  });
  return Number(row?.n ?? 0);
}
