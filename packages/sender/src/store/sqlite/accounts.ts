/** Accounts: create, read by id, find by API key hash. */
import type { NewAccount } from '../port.js';
import type { AccountRecord } from '../records.js';
import { type Row, toAccount } from '../rows.js';
import type { SqliteDb } from './database.js';

const INSERT_ACCOUNT = `
INSERT INTO accounts (id, name, plan, api_key_hash, created_at) VALUES (@id, @name, @plan, @apiKeyHash, @now)`;
const SELECT_ACCOUNT = `SELECT * FROM accounts WHERE id = ?`;
const SELECT_ACCOUNT_BY_KEY_HASH = `SELECT * FROM accounts WHERE api_key_hash = ?`;

export function createAccount(db: SqliteDb, input: NewAccount): AccountRecord {
  db.st(INSERT_ACCOUNT).run(input);
  return toAccount(db.st(SELECT_ACCOUNT).get(input.id) as Row);
}

export function getAccount(db: SqliteDb, id: string): AccountRecord | null {
  const row = db.st(SELECT_ACCOUNT).get(id) as Row | undefined;
  return row ? toAccount(row) : null;
}

export function findAccountByApiKeyHash(db: SqliteDb, hash: string): AccountRecord | null {
  const row = db.st(SELECT_ACCOUNT_BY_KEY_HASH).get(hash) as Row | undefined;
  return row ? toAccount(row) : null;
}
