/** Accounts: create, read by id, find by API key hash. */
import type { NewAccount } from '../port.js';
import type { AccountRecord } from '../records.js';
import { toAccount } from '../rows.js';
import type { Pg } from './connection.js';

const INSERT_ACCOUNT = `
INSERT INTO accounts (id, name, plan, api_key_hash, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING *`;
const SELECT_ACCOUNT = `SELECT * FROM accounts WHERE id = $1`;
const SELECT_ACCOUNT_BY_KEY_HASH = `SELECT * FROM accounts WHERE api_key_hash = $1`;

export async function createAccount(pg: Pg, input: NewAccount): Promise<AccountRecord> {
  const [row] = await pg.rows(INSERT_ACCOUNT, [
    input.id,
    input.name,
    input.plan,
    input.apiKeyHash,
    input.now,
  ]);
  return toAccount(row!);
}

export async function getAccount(pg: Pg, id: string): Promise<AccountRecord | null> {
  const [row] = await pg.rows(SELECT_ACCOUNT, [id]);
  return row ? toAccount(row) : null;
}

export async function findAccountByApiKeyHash(pg: Pg, hash: string): Promise<AccountRecord | null> {
  const [row] = await pg.rows(SELECT_ACCOUNT_BY_KEY_HASH, [hash]);
  return row ? toAccount(row) : null;
}
