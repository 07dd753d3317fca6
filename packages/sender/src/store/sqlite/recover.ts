/**
 * Recovery (design D35): an endpoint's failed deliveries created in a time range get one more
 * attempt each, the oldest first, at most `limit` per call. The walk follows the partial index of
 * failed deliveries, so it costs what it recovers, never the endpoint's whole log.
 */
import type { RecoverRequest, RecoverResult } from '../port.js';
import { KEPT_ENDPOINT_SQL, RESUME_STATUS_SQL } from '../sql-rules.js';
import { countParam, type SqliteDb } from './database.js';
import { lowerDue } from './endpoint-due.js';
import type { OffLoopReads } from './off-loop-reads.js';

const SELECT_ENDPOINT_STATE = `SELECT enabled, paused FROM endpoints WHERE id = ? AND account_id = ? AND ${KEPT_ENDPOINT_SQL}`;
const RECOVER = `
UPDATE deliveries SET status = ${RESUME_STATUS_SQL}, next_attempt_at = @now, updated_at = @now
WHERE id IN (
  SELECT id FROM deliveries INDEXED BY deliveries_failed
  WHERE endpoint_id = @id AND status = 'failed' AND created_at >= @since AND created_at < @until
  ORDER BY created_at LIMIT ${countParam('limit')})`;
const COUNT_FAILED = `
SELECT count(*) AS n FROM deliveries INDEXED BY deliveries_failed
WHERE endpoint_id = @id AND status = 'failed' AND created_at >= @since AND created_at < @until`;

export function recoverDeliveries(db: SqliteDb, reads: OffLoopReads) {
  const recover = db.immediate((accountId: string, id: string, r: RecoverRequest): RecoverResult => {
    const endpoint = db.st(SELECT_ENDPOINT_STATE).get(id, accountId) as
      | { enabled: number; paused: number }
      | undefined;
    if (!endpoint) return { ok: false, reason: 'not_found' };
    if (endpoint.enabled !== 1) return { ok: false, reason: 'endpoint_disabled' };
    if (endpoint.paused === 1) return { ok: false, reason: 'endpoint_paused' };
    const recovered = db
      .st(RECOVER)
      .run({ id, since: r.since, until: r.until, now: r.now, limit: r.limit }).changes;
    if (recovered > 0) lowerDue(db, id, r.now);
    return { ok: true, recovered, remaining: 0 };
  });
  return async (accountId: string, id: string, r: RecoverRequest): Promise<RecoverResult> => {
    const result = recover(accountId, id, r);
    if (!result.ok) return result;
    // Counted after the commit, off the event loop: it reads every failed delivery of the range
    // (a million: 50 ms).
    const row = await reads.get(COUNT_FAILED, { id, since: r.since, until: r.until });
    return { ...result, remaining: Number(row?.n ?? 0) };
  };
}
