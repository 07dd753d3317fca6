/**
 * Deleting an endpoint (design D78): first marked (disabled, and gone for every read of endpoints,
 * fan-out included), then its deliveries removed a bounded step at a time, each step a short
 * transaction of its own, then the endpoint itself. In one transaction, an endpoint of a million
 * deliveries held its row locked for seconds, and every publish batch holding an event for it
 * (every tenant's, batched together: publish.ts) waited. A deletion cut short resumes where it
 * ended. The mark waits for the publishes holding the endpoint share-locked; later ones pass over
 * it.
 */
import type { EndpointRef } from '../port.js';
import type { Pg } from './connection.js';
import { deleteDeliveriesOfEndpoint, deleteDeliveriesOfEndpointStep } from './delete-deliveries.js';

/** Marked, and listed among the deletions under way (migration 22). */
const MARK_DELETED = `
WITH marked AS (
  UPDATE endpoints SET deleted_at = coalesce(deleted_at, $3), enabled = false, updated_at = $3
  WHERE id = $1 AND account_id = $2
  RETURNING id, account_id
),
listed AS (
  INSERT INTO endpoints_being_deleted (id, account_id) SELECT id, account_id FROM marked
  ON CONFLICT (id) DO NOTHING
)
SELECT count(*)::int AS n FROM marked`;
/**
 * First, so that it waits for the publishes holding the endpoint share-locked; any delivery left
 * goes after it in the same transaction (none, once the steps are done: fan-out makes none after
 * the mark).
 */
const DELETE_ENDPOINT = `DELETE FROM endpoints WHERE id = $1 AND account_id = $2`;
/** Off the list, whether the endpoint was there still (its account's deletion may have taken it). */
const UNLIST = `DELETE FROM endpoints_being_deleted WHERE id = $1 AND account_id = $2`;
const BEING_DELETED = `SELECT id, account_id FROM endpoints_being_deleted ORDER BY id LIMIT $1`;

export async function markEndpointDeleted(
  pg: Pg,
  accountId: string,
  id: string,
  now: number,
): Promise<boolean> {
  const [row] = await pg.durableRows(MARK_DELETED, [id, accountId, now]);
  return Number(row?.n ?? 0) > 0;
}

/** Each step's transaction runs again if chosen as a deadlock victim (`tx`; connection.ts). */
export async function deleteEndpointStep(
  pg: Pg,
  accountId: string,
  id: string,
  limit: number,
): Promise<number> {
  return pg.tx((client) => deleteDeliveriesOfEndpointStep(client, accountId, id, limit));
}

/** Run again if chosen as a deadlock victim (see connection.ts). */
export async function deleteEndpoint(pg: Pg, accountId: string, id: string): Promise<boolean> {
  return pg.durableTx(async (client) => {
    // The endpoint's row, then the list's: the order the mark takes them in.
    const deleted = ((await client.query(DELETE_ENDPOINT, [id, accountId])).rowCount ?? 0) > 0;
    await client.query(UNLIST, [id, accountId]);
    if (deleted) await deleteDeliveriesOfEndpoint(client, id);
    return deleted;
  });
}

export async function endpointsBeingDeleted(pg: Pg, limit: number): Promise<EndpointRef[]> {
  return (await pg.rows(BEING_DELETED, [limit])).map((r) => ({
    id: String(r.id),
    accountId: String(r.account_id),
  }));
}
