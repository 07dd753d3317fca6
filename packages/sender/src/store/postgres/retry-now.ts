/** A manual retry: one delivery due now, whatever its state, unless its endpoint is disabled or paused or it is in flight. */
import { attemptFallsOut } from '../../domain/attempts-kept.js';
import type { RetryNowResult } from '../port.js';
import { toDelivery } from '../rows.js';
import { deleteAttemptsPastKeptSql, KEPT_ENDPOINT_SQL, RESUME_STATUS_SQL } from '../sql-rules.js';
import type { Pg } from './connection.js';
import { SELECT_DELIVERY } from './delivery-log.js';
import { madeClaimable } from './endpoint-due.js';

/**
 * Share-locks the endpoint so it cannot be disabled while a retry of one of its deliveries is set.
 * A delivery of an endpoint being deleted is going with it (design D78): not found.
 */
const LOCK_ENDPOINT_SHARED = `SELECT enabled, paused FROM endpoints WHERE id = $1 AND ${KEPT_ENDPOINT_SQL} FOR SHARE`;
const LOCK_DELIVERY = `SELECT * FROM deliveries WHERE id = $1 AND account_id = $2 FOR UPDATE`;
/** The delivery's lease, if any (expired or not): whether an attempt is in flight. */
const SELECT_LEASE = `SELECT expires_at FROM leases WHERE delivery_id = $1`;
const RETRY_NOW = `
UPDATE deliveries SET status = ${RESUME_STATUS_SQL}, next_attempt_at = $2, updated_at = $2
WHERE id = $1
RETURNING *`;
const DROP_PAST_KEPT = deleteAttemptsPastKeptSql('$1', '$2::int');

export async function retryNow(
  pg: Pg,
  accountId: string,
  deliveryId: string,
  now: number,
): Promise<RetryNowResult> {
  return pg.durableTx(async (client): Promise<RetryNowResult> => {
    const one = async (sql: string, values: unknown[]) => (await client.query(sql, values)).rows[0];
    const found = await one(SELECT_DELIVERY, [deliveryId, accountId]);
    if (!found) return { ok: false, reason: 'not_found' };
    const endpoint = await one(LOCK_ENDPOINT_SHARED, [found.endpoint_id]);
    if (!endpoint) return { ok: false, reason: 'not_found' };
    if (!endpoint.enabled) return { ok: false, reason: 'endpoint_disabled' };
    if (endpoint.paused) return { ok: false, reason: 'endpoint_paused' };
    if (!(await one(LOCK_DELIVERY, [deliveryId, accountId]))) return { ok: false, reason: 'not_found' };
    const lease = await one(SELECT_LEASE, [deliveryId]);
    if (lease && Number(lease.expires_at) > now) return { ok: false, reason: 'in_flight' };
    const updated = await one(RETRY_NOW, [deliveryId, now]);
    if (attemptFallsOut(updated.attempts)) await client.query(DROP_PAST_KEPT, [deliveryId, updated.attempts]);
    await madeClaimable(client, pg.schema, found.endpoint_id, now);
    return { ok: true, delivery: toDelivery(updated) };
  });
}
