/**
 * Deleting deliveries with their attempts and leases: no foreign key cascades to them (migration
 * 20), so every deletion of deliveries goes through here.
 *
 * Deliveries that may still be attempted are locked by one statement and deleted by the next, in
 * one transaction: the lock waits for a record under way (it holds the delivery, record-attempt.ts)
 * and the deletion's snapshot, taken after that record committed, holds its attempt. In one
 * statement, an attempt committed while the statement waited for the delivery's lock would be
 * left behind. The deliveries are locked in id order, the order records and renewals take them in,
 * so those meet a deletion as a wait (claims skip locked rows). What locks in another order (a
 * batched record's reset of its endpoint, a disabling's or a pause's hold) may deadlock with one,
 * and the victim runs again (connection.ts).
 */
import type pg from 'pg';
import { endpointDeliveriesQueuedFirstSql } from '../sql-rules.js';

/** Deletes the deliveries `which` selects (a condition on `deliveries`), their attempts and leases. */
export const deleteDeliveriesSql = (which: string) => `
WITH gone AS (DELETE FROM deliveries WHERE ${which} RETURNING id),
-- The ids as an array read once: each part then seeks by key (as in record-attempt.ts).
attempts_gone AS (DELETE FROM attempts WHERE delivery_id = ANY (ARRAY(SELECT id FROM gone))),
leases_gone AS (DELETE FROM leases WHERE delivery_id = ANY (ARRAY(SELECT id FROM gone)))
SELECT count(*)::int AS n FROM gone`;

const LOCK_OF_ENDPOINT = `
SELECT count(*)::int AS n FROM (SELECT 1 FROM deliveries WHERE endpoint_id = $1 ORDER BY id FOR UPDATE) d`;
const DELETE_OF_ENDPOINT = deleteDeliveriesSql('endpoint_id = $1');

/**
 * Up to `$3` deliveries of a marked endpoint (delete-endpoint.ts), its queued ones first, read
 * from the index by endpoint and status, then locked in id order: ordered by id in the read
 * itself, it sorted every delivery of the endpoint, at each step.
 */
const STEP_OF_ENDPOINT = `
SELECT d.id FROM (${endpointDeliveriesQueuedFirstSql('$1', '$3::int')}) d
WHERE EXISTS (SELECT 1 FROM endpoints e WHERE e.id = $1 AND e.account_id = $2 AND e.deleted_at IS NOT NULL)`;
const LOCK_BY_ID = `SELECT id FROM deliveries WHERE id = ANY ($1::text[]) ORDER BY id FOR UPDATE`;

/**
 * Up to `$2` deliveries of an account, read in the order of its index (by account, status and id),
 * which the ORDER BY names so that the index is the plan's way to it, then locked in id order
 * (LOCK_BY_ID). Ordered by id in the read itself, it walked the primary key past every other
 * account's deliveries before the first of its own left, more at each step: 30% to 40% into
 * deleting an account of half a million among a million, a step took 41 ms, against 5 ms.
 */
export const STEP_OF_ACCOUNT = `SELECT id FROM deliveries WHERE account_id = $1 ORDER BY status, id LIMIT $2`;
const DELETE_BY_ID = deleteDeliveriesSql('id = ANY ($1::text[])');

/**
 * Every delivery of an endpoint, inside the transaction that deleted the endpoint: that deletion
 * waited for the publishes holding the endpoint (publish.ts), and a later one finds it gone, so
 * no delivery of it is made after this.
 */
export async function deleteDeliveriesOfEndpoint(client: pg.PoolClient, endpointId: string): Promise<void> {
  await client.query(LOCK_OF_ENDPOINT, [endpointId]);
  await client.query(DELETE_OF_ENDPOINT, [endpointId]);
}

/** Up to `limit` deliveries of a marked endpoint, inside a transaction; resolves with how many went. */
export async function deleteDeliveriesOfEndpointStep(
  client: pg.PoolClient,
  accountId: string,
  endpointId: string,
  limit: number,
): Promise<number> {
  return deleteStep(client, STEP_OF_ENDPOINT, [endpointId, accountId, limit]);
}

/** Up to `limit` deliveries of an account, inside a transaction; resolves with how many went. */
export async function deleteDeliveriesOfAccount(
  client: pg.PoolClient,
  accountId: string,
  limit: number,
): Promise<number> {
  return deleteStep(client, STEP_OF_ACCOUNT, [accountId, limit]);
}

/** The deliveries `pick` reads, locked in id order and deleted; resolves with how many went. */
async function deleteStep(client: pg.PoolClient, pick: string, params: unknown[]): Promise<number> {
  for (;;) {
    const picked = (await client.query<{ id: string }>(pick, params)).rows;
    if (picked.length === 0) return 0;
    const locked = await client.query<{ id: string }>(LOCK_BY_ID, [picked.map((r) => r.id)]);
    // All deleted meanwhile (another deletion, a prune): read again, past them. A step answering 0
    // here would end the deletion with the rest in its last transaction.
    if (locked.rows.length === 0) continue;
    const [row] = (await client.query<{ n: number }>(DELETE_BY_ID, [locked.rows.map((r) => r.id)])).rows;
    return Number(row?.n ?? 0);
  }
}
