/**
 * Pausing and resuming an endpoint (design D34). A pause holds the endpoint's claimable deliveries
 * in its own transaction: held rows are outside the due-time index, so the claim never reads them
 * however many wait. The endpoint row is updated first: a publish share-locks it, so a delivery it
 * makes is either held here or made held (publish.ts). Resuming makes them claimable at their own
 * due times, unless the endpoint is disabled, whose re-enabling resumes them instead.
 */
import type { Resumed } from '../port.js';
import type { EndpointRecord } from '../records.js';
import { toEndpoint } from '../rows.js';
import { CLAIMABLE_SQL, KEPT_ENDPOINT_SQL, RESUME_STATUS_SQL } from '../sql-rules.js';
import type { Pg } from './connection.js';
import { madeClaimable } from './endpoint-due.js';

const PAUSE_ENDPOINT = `
UPDATE endpoints SET paused = true, paused_at = $3, updated_at = $3
WHERE id = $1 AND account_id = $2 AND NOT paused AND ${KEPT_ENDPOINT_SQL} RETURNING id`;
export const HOLD_DELIVERIES = `
UPDATE deliveries SET status = 'held', updated_at = $2 WHERE endpoint_id = $1 AND status IN ${CLAIMABLE_SQL}`;
const RESUME_ENDPOINT = `
UPDATE endpoints SET paused = false, paused_at = NULL, updated_at = $3
WHERE id = $1 AND account_id = $2 AND paused AND ${KEPT_ENDPOINT_SQL} RETURNING enabled`;
/**
 * A held delivery keeps its due time: one due while paused goes at once, a later retry at its time.
 * Answers how many it resumed, and the earliest due time among them (endpoint-due.ts).
 */
export const RESUME_HELD = `
WITH resumed AS (
  UPDATE deliveries SET status = ${RESUME_STATUS_SQL}, next_attempt_at = coalesce(next_attempt_at, $2), updated_at = $2
  WHERE endpoint_id = $1 AND status = 'held'
  RETURNING next_attempt_at
)
SELECT count(*)::int AS n, min(next_attempt_at) AS at FROM resumed`;
const SELECT_ENDPOINT = `SELECT * FROM endpoints WHERE id = $1 AND account_id = $2 AND ${KEPT_ENDPOINT_SQL}`;

export async function pauseEndpoint(
  pg: Pg,
  accountId: string,
  id: string,
  now: number,
): Promise<EndpointRecord | null> {
  return pg.durableTx(async (client) => {
    if ((await client.query(PAUSE_ENDPOINT, [id, accountId, now])).rowCount) {
      await client.query(HOLD_DELIVERIES, [id, now]);
    }
    const [row] = (await client.query(SELECT_ENDPOINT, [id, accountId])).rows;
    return row ? toEndpoint(row) : null;
  });
}

export async function resumeEndpoint(
  pg: Pg,
  accountId: string,
  id: string,
  now: number,
): Promise<Resumed | null> {
  return pg.durableTx(async (client) => {
    const [row] = (await client.query(RESUME_ENDPOINT, [id, accountId, now])).rows;
    const [held] = row?.enabled ? (await client.query(RESUME_HELD, [id, now])).rows : [{ n: 0 }];
    const resumed = held.n as number;
    if (resumed > 0) await madeClaimable(client, pg.schema, id, held.at);
    const [endpoint] = (await client.query(SELECT_ENDPOINT, [id, accountId])).rows;
    return endpoint ? { endpoint: toEndpoint(endpoint), resumed } : null;
  });
}
