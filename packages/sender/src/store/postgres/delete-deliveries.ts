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

const LOCK_OF_ACCOUNT = `SELECT id FROM deliveries WHERE account_id = $1 ORDER BY id LIMIT $2 FOR UPDATE`;
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

/** Up to `limit` deliveries of an account, inside a transaction; resolves with how many went. */
export async function deleteDeliveriesOfAccount(
  client: pg.PoolClient,
  accountId: string,
  limit: number,
): Promise<number> {
  const ids = (await client.query<{ id: string }>(LOCK_OF_ACCOUNT, [accountId, limit])).rows.map((r) => r.id);
  if (ids.length === 0) return 0;
  const [row] = (await client.query<{ n: number }>(DELETE_BY_ID, [ids])).rows;
  return Number(row?.n ?? 0);
}
