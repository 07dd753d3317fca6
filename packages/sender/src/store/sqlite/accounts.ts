/** Accounts: create (with the first API key), read by id, list, find by API key hash. */
import type { NewAccount, Page } from '../port.js';
import type { AccountRecord } from '../records.js';
import { type Row, toAccount } from '../rows.js';
import { findApiKey } from './api-keys.js';
import { countParam, type SqliteDb } from './database.js';

const INSERT_ACCOUNT = `
INSERT INTO accounts (id, name, plan, api_key_hash, created_at) VALUES (@id, @name, @plan, @apiKeyHash, @now)`;
const INSERT_FIRST_KEY = `
INSERT INTO api_keys (id, account_id, prefix, key_hash, created_at) VALUES (@keyId, @id, @prefix, @apiKeyHash, @now)`;
/** An account being deleted reads as gone (design D37). */
const SELECT_ACCOUNT = `SELECT * FROM accounts WHERE id = ? AND deleted_at IS NULL`;
const LIST_ACCOUNTS = `
SELECT * FROM accounts WHERE deleted_at IS NULL AND id > @cursor ORDER BY id LIMIT ${countParam('limit')}`;

export function createAccount(db: SqliteDb) {
  return db.immediate((input: NewAccount): AccountRecord => {
    db.st(INSERT_ACCOUNT).run(input);
    db.st(INSERT_FIRST_KEY).run({
      ...input,
      keyId: input.apiKeyId ?? `key_${input.id.slice(5)}`,
      prefix: input.apiKeyPrefix ?? null,
    });
    return toAccount(db.st(SELECT_ACCOUNT).get(input.id) as Row);
  });
}

export function getAccount(db: SqliteDb, id: string): AccountRecord | null {
  const row = db.st(SELECT_ACCOUNT).get(id) as Row | undefined;
  return row ? toAccount(row) : null;
}

export function findAccountByApiKeyHash(db: SqliteDb, hash: string, now = Date.now()): AccountRecord | null {
  return findApiKey(db, hash, now)?.account ?? null;
}

export function listAccounts(db: SqliteDb, page: { cursor?: string; limit: number }): Page<AccountRecord> {
  const rows = db.st(LIST_ACCOUNTS).all({ cursor: page.cursor ?? '', limit: page.limit + 1 }) as Row[];
  const items = rows.slice(0, page.limit).map(toAccount);
  return { items, nextCursor: rows.length > page.limit ? items[items.length - 1]!.id : null };
}
