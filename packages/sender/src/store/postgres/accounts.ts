/** Accounts: create (with the first API key), read by id, list, find by API key hash. */
import type { NewAccount, Page } from '../port.js';
import type { AccountRecord } from '../records.js';
import { toAccount } from '../rows.js';
import { findApiKey } from './api-keys.js';
import type { Pg } from './connection.js';

/** The account and its first key in one statement. */
const INSERT_ACCOUNT = `
WITH account AS (
  INSERT INTO accounts (id, name, plan, api_key_hash, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING *
),
first_key AS (
  INSERT INTO api_keys (id, account_id, prefix, key_hash, created_at)
  SELECT $6, id, $7, api_key_hash, created_at FROM account
)
SELECT * FROM account`;
/** An account being deleted reads as gone (design D37). */
const SELECT_ACCOUNT = `SELECT * FROM accounts WHERE id = $1 AND deleted_at IS NULL`;
const LIST_ACCOUNTS = `SELECT * FROM accounts WHERE deleted_at IS NULL AND id > $1 ORDER BY id LIMIT $2`;

export async function createAccount(pg: Pg, input: NewAccount): Promise<AccountRecord> {
  const [row] = await pg.durableRows(INSERT_ACCOUNT, [
    input.id,
    input.name,
    input.plan,
    input.apiKeyHash,
    input.now,
    input.apiKeyId ?? `key_${input.id.slice(5)}`,
    input.apiKeyPrefix ?? null,
  ]);
  return toAccount(row!);
}

export async function getAccount(pg: Pg, id: string): Promise<AccountRecord | null> {
  const [row] = await pg.rows(SELECT_ACCOUNT, [id]);
  return row ? toAccount(row) : null;
}

export async function findAccountByApiKeyHash(
  pg: Pg,
  hash: string,
  now = Date.now(),
): Promise<AccountRecord | null> {
  return (await findApiKey(pg, hash, now))?.account ?? null;
}

export async function listAccounts(
  pg: Pg,
  page: { cursor?: string; limit: number },
): Promise<Page<AccountRecord>> {
  const rows = await pg.rows(LIST_ACCOUNTS, [page.cursor ?? '', page.limit + 1]);
  const items = rows.slice(0, page.limit).map(toAccount);
  return { items, nextCursor: rows.length > page.limit ? items[items.length - 1]!.id : null };
}
