/**
 * Deleting an account (design D37): first marked (its keys revoked, the account gone for every
 * read), then its rows removed a bounded step at a time, each step a short transaction of its own,
 * so a large account never holds locks for long. A deletion cut short resumes where it ended.
 * The mark waits for the publishes holding the account's row (publish.ts) and refuses the later
 * ones, so no row of the account is written once the mark is committed.
 */
import type { Pg } from './connection.js';
import { deleteDeliveriesOfAccount } from './delete-deliveries.js';

const MARK_DELETED = `
WITH marked AS (UPDATE accounts SET deleted_at = coalesce(deleted_at, $2) WHERE id = $1 RETURNING id),
revoked AS (
  UPDATE api_keys SET revoked_at = $2 WHERE account_id IN (SELECT id FROM marked) AND revoked_at IS NULL
),
remembered AS (
  INSERT INTO deleted_accounts (id, deleted_at) SELECT id, $2 FROM marked ON CONFLICT (id) DO NOTHING
)
SELECT count(*)::int AS n FROM marked`;
const DELETE_EVENTS = `
WITH gone AS (
  DELETE FROM events WHERE id IN (SELECT id FROM events WHERE account_id = $1 LIMIT $2)
  RETURNING id
)
SELECT count(*)::int AS n FROM gone`;
const DELETE_ENDPOINTS = `DELETE FROM endpoints WHERE account_id = $1`;
/** Endpoint deletions of the account under way (delete-endpoint.ts) end with it. */
const UNLIST_ENDPOINTS = `DELETE FROM endpoints_being_deleted WHERE account_id = $1`;
const DELETE_KEYS = `DELETE FROM api_keys WHERE account_id = $1`;
/**
 * Last, and only once no event of the account is left: the row goes in the transaction that
 * finds none, and it waits for a publish that holds the row.
 */
const DELETE_ACCOUNT = `
DELETE FROM accounts WHERE id = $1 AND deleted_at IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM events WHERE account_id = $1)`;

export async function markAccountDeleted(pg: Pg, id: string, now: number): Promise<boolean> {
  const [row] = await pg.durableRows(MARK_DELETED, [id, now]);
  return Number(row?.n ?? 0) > 0;
}

/** Each step's transaction runs again if chosen as a deadlock victim (`tx`; connection.ts). */
export async function deleteAccountStep(pg: Pg, id: string, limit: number): Promise<number> {
  const deliveries = await pg.tx((client) => deleteDeliveriesOfAccount(client, id, limit));
  if (deliveries > 0) return deliveries;
  const [events] = await pg.deadlockRetried(() => pg.rows(DELETE_EVENTS, [id, limit]));
  if (Number(events?.n) > 0) return Number(events!.n);
  return pg.durableTx(async (client) => {
    let n = 0;
    for (const sql of [DELETE_ENDPOINTS, UNLIST_ENDPOINTS, DELETE_KEYS, DELETE_ACCOUNT]) {
      n += (await client.query(sql, [id])).rowCount ?? 0;
    }
    return n;
  });
}
