/** API keys (design D37): found by hash, listed, rotated with a grace, revoked; never stored in clear. */
import type { KeyHolder, NewApiKey } from '../port.js';
import type { ApiKeyRecord } from '../records.js';
import { ACCOUNT_COLUMNS_AS_A, type Row, toApiKey, toKeyHolder } from '../rows.js';
import type { SqliteDb } from './database.js';

/** A key that works at `@now`, with its account (not being deleted). */
const WORKING_KEY = `
SELECT k.*, ${ACCOUNT_COLUMNS_AS_A}
FROM api_keys k JOIN accounts a ON a.id = k.account_id
WHERE k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > @now) AND a.deleted_at IS NULL`;
const FIND_KEY = `${WORKING_KEY} AND k.key_hash = @hash`;
const GET_KEY = `${WORKING_KEY} AND k.id = @id`;
/** To the minute: a key in use costs one write a minute, not one per request. */
const TOUCH_KEY = `
UPDATE api_keys SET last_used_at = @now WHERE id = @id AND (last_used_at IS NULL OR last_used_at <= @now - 60000)`;
const LIST_KEYS = `SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at, id`;
const ACCOUNT_EXISTS = `SELECT 1 FROM accounts WHERE id = ? AND deleted_at IS NULL`;
const INSERT_KEY = `
INSERT INTO api_keys (id, account_id, prefix, key_hash, created_at) VALUES (@id, @accountId, @prefix, @hash, @now)`;
const EXPIRE_OTHERS = `
UPDATE api_keys SET expires_at = @at
WHERE account_id = @accountId AND id <> @id AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > @at)
RETURNING *`;
const REVOKE_KEY = `
UPDATE api_keys SET revoked_at = coalesce(revoked_at, @now) WHERE id = @id AND account_id = @accountId RETURNING *`;

export function findApiKey(db: SqliteDb, hash: string, now: number): KeyHolder | null {
  const row = db.st(FIND_KEY).get({ hash, now }) as Row | undefined;
  return row ? toKeyHolder(row) : null;
}

export function getApiKey(db: SqliteDb, id: string, now: number): KeyHolder | null {
  const row = db.st(GET_KEY).get({ id, now }) as Row | undefined;
  return row ? toKeyHolder(row) : null;
}

export function touchApiKey(db: SqliteDb, id: string, now: number): void {
  db.st(TOUCH_KEY).run({ id, now });
}

export function listApiKeys(db: SqliteDb, accountId: string): ApiKeyRecord[] {
  return (db.st(LIST_KEYS).all(accountId) as Row[]).map(toApiKey);
}

export function rotateApiKey(db: SqliteDb) {
  return db.immediate(
    (
      accountId: string,
      key: NewApiKey,
      { now, expireOthersAt }: { now: number; expireOthersAt: number },
    ): { key: ApiKeyRecord; others: ApiKeyRecord[] } | null => {
      if (!db.st(ACCOUNT_EXISTS).get(accountId)) return null;
      db.st(INSERT_KEY).run({ ...key, accountId, now });
      const others = (db.st(EXPIRE_OTHERS).all({ accountId, id: key.id, at: expireOthersAt }) as Row[]).map(
        toApiKey,
      );
      const created = listApiKeys(db, accountId).find((k) => k.id === key.id)!;
      return { key: created, others };
    },
  );
}

export function revokeApiKey(db: SqliteDb, accountId: string, id: string, now: number): ApiKeyRecord | null {
  const row = db.st(REVOKE_KEY).get({ id, accountId, now }) as Row | undefined;
  return row ? toApiKey(row) : null;
}
