/**
 * Pausing and resuming an endpoint (design D34). A pause holds the endpoint's claimable deliveries:
 * held rows are outside the due-time index, so the claim never reads them however many wait. The
 * endpoint row is updated first: a publish share-locks it, so a delivery it makes is either held
 * by the pause's steps or made held (publish.ts). Resuming makes them claimable at their own due
 * times, unless the endpoint is disabled, whose re-enabling resumes them instead. Either moves the
 * first step of them in the transaction that changes the flag, and lists the endpoint for the rest
 * (settle-queue.ts).
 */
import { resumedAnswer } from '../flag-change.js';
import type { Resumed, Settling } from '../port.js';
import { PRUNE_STEP } from '../prune-steps.js';
import type { EndpointRecord } from '../records.js';
import { toEndpoint } from '../rows.js';
import { KEPT_ENDPOINT_SQL } from '../sql-rules.js';
import type { Pg } from './connection.js';
import { listAndMove } from './settle-queue.js';

const PAUSE_ENDPOINT = `
UPDATE endpoints SET paused = true, paused_at = $3, updated_at = $3
WHERE id = $1 AND account_id = $2 AND NOT paused AND ${KEPT_ENDPOINT_SQL} RETURNING id`;
const RESUME_ENDPOINT = `
UPDATE endpoints SET paused = false, paused_at = NULL, updated_at = $3
WHERE id = $1 AND account_id = $2 AND paused AND ${KEPT_ENDPOINT_SQL} RETURNING enabled`;
const SELECT_ENDPOINT = `SELECT * FROM endpoints WHERE id = $1 AND account_id = $2 AND ${KEPT_ENDPOINT_SQL}`;

export async function pauseEndpoint(
  pg: Pg,
  accountId: string,
  id: string,
  now: number,
): Promise<EndpointRecord | null> {
  return pg.durableTx(async (client) => {
    if ((await client.query(PAUSE_ENDPOINT, [id, accountId, now])).rowCount) {
      await listAndMove(client, pg.schema, { id, accountId }, 'hold', { now, limit: PRUNE_STEP });
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
): Promise<(Resumed & Settling) | null> {
  return pg.durableTx(async (client) => {
    const [row] = (await client.query(RESUME_ENDPOINT, [id, accountId, now])).rows;
    const moved = row?.enabled
      ? await listAndMove(client, pg.schema, { id, accountId }, 'resume', { now, limit: PRUNE_STEP })
      : null;
    const [endpoint] = (await client.query(SELECT_ENDPOINT, [id, accountId])).rows;
    return endpoint ? resumedAnswer(toEndpoint(endpoint), moved) : null;
  });
}
