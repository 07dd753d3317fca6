/** A manual retry: one delivery due now, whatever its state, unless its endpoint is disabled or paused or it is in flight. */
import { attemptFallsOut } from '../../domain/attempts-kept.js';
import type { RetryNowResult } from '../port.js';
import { type Row, toDelivery } from '../rows.js';
import { deleteAttemptsPastKeptSql, KEPT_ENDPOINT_SQL, RESUME_STATUS_SQL } from '../sql-rules.js';
import type { SqliteDb } from './database.js';
import { SELECT_DELIVERY } from './delivery-log.js';
import { lowerDue } from './endpoint-due.js';

/** A delivery of an endpoint being deleted is going with it (design D78): not found. */
const SELECT_ENDPOINT_ENABLED = `SELECT enabled, paused FROM endpoints WHERE id = ? AND ${KEPT_ENDPOINT_SQL}`;
const RETRY_NOW = `
UPDATE deliveries SET status = ${RESUME_STATUS_SQL}, next_attempt_at = @now, updated_at = @now
WHERE id = @id RETURNING *`;
const DROP_PAST_KEPT = deleteAttemptsPastKeptSql('@id', '@attempts');

export function retryNow(db: SqliteDb) {
  return db.immediate((accountId: string, id: string, now: number): RetryNowResult => {
    const row = db.st(SELECT_DELIVERY).get(id, accountId) as Row | undefined;
    if (!row) return { ok: false, reason: 'not_found' };
    const endpoint = db.st(SELECT_ENDPOINT_ENABLED).get(row.endpoint_id) as
      | { enabled: number; paused: number }
      | undefined;
    if (!endpoint) return { ok: false, reason: 'not_found' };
    if (endpoint.enabled !== 1) return { ok: false, reason: 'endpoint_disabled' };
    if (endpoint.paused === 1) return { ok: false, reason: 'endpoint_paused' };
    if (row.lease_expires_at !== null && (row.lease_expires_at as number) > now) {
      return { ok: false, reason: 'in_flight' };
    }
    const delivery = toDelivery(db.st(RETRY_NOW).get({ id, now }) as Row);
    if (attemptFallsOut(delivery.attempts)) db.st(DROP_PAST_KEPT).run({ id, attempts: delivery.attempts });
    lowerDue(db, delivery.endpointId, now);
    return { ok: true, delivery };
  });
}
