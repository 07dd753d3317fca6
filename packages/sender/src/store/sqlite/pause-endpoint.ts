/**
 * Pausing and resuming an endpoint (design D34). A pause holds the endpoint's claimable deliveries
 * in its own transaction: held rows are outside the due-time index, so the claim never reads them
 * however many wait. Resuming makes them claimable at their own due times, unless the endpoint is
 * disabled, whose re-enabling resumes them instead.
 */
import type { Resumed } from '../port.js';
import type { EndpointRecord } from '../records.js';
import type { Row } from '../rows.js';
import { CLAIMABLE_SQL, isQueuedSql, KEPT_ENDPOINT_SQL, RESUME_STATUS_SQL } from '../sql-rules.js';
import type { SqliteDb } from './database.js';
import { lowerDue } from './endpoint-due.js';
import { getEndpoint } from './endpoints.js';

const PAUSE_ENDPOINT = `
UPDATE endpoints SET paused = 1, paused_at = @now, updated_at = @now
WHERE id = @id AND account_id = @accountId AND paused = 0 AND ${KEPT_ENDPOINT_SQL}`;
const HOLD_DELIVERIES = `
UPDATE deliveries INDEXED BY deliveries_queued_by_endpoint SET status = 'held', updated_at = @now
WHERE endpoint_id = @id AND ${isQueuedSql('status')} AND status IN ${CLAIMABLE_SQL}`;
const RESUME_ENDPOINT = `
UPDATE endpoints SET paused = 0, paused_at = NULL, updated_at = @now
WHERE id = @id AND account_id = @accountId AND paused = 1 AND ${KEPT_ENDPOINT_SQL} RETURNING enabled`;
/**
 * (isQueuedSql repeats the partial index's own condition: SQLite uses a partial index
 * only for a query that states it.) A held delivery keeps its due time: one due while paused goes at once, a later retry at its time. */
export const RESUME_HELD = `
UPDATE deliveries INDEXED BY deliveries_queued_by_endpoint
SET status = ${RESUME_STATUS_SQL}, next_attempt_at = coalesce(next_attempt_at, @now), updated_at = @now
WHERE endpoint_id = @id AND ${isQueuedSql('status')} AND status = 'held'`;

export function pauseEndpoint(db: SqliteDb) {
  return db.immediate((accountId: string, id: string, now: number): EndpointRecord | null => {
    if (db.st(PAUSE_ENDPOINT).run({ accountId, id, now }).changes > 0) {
      db.st(HOLD_DELIVERIES).run({ id, now });
    }
    return getEndpoint(db, accountId, id);
  });
}

export function resumeEndpoint(db: SqliteDb) {
  return db.immediate((accountId: string, id: string, now: number): Resumed | null => {
    const row = db.st(RESUME_ENDPOINT).get({ accountId, id, now }) as Row | undefined;
    const resumed = row && row.enabled === 1 ? db.st(RESUME_HELD).run({ id, now }).changes : 0;
    if (resumed > 0) lowerDue(db, id, now);
    const endpoint = getEndpoint(db, accountId, id);
    return endpoint ? { endpoint, resumed } : null;
  });
}
