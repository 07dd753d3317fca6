/** Portal links (design D54): stored by hash, taken once by deleting them. */
import type { NewPortalToken, TakenPortalToken } from '../portal-token-port.js';
import type { Row } from '../rows.js';
import type { SqliteDb } from './database.js';

/** Only for an account that exists and is not being deleted. */
const INSERT_TOKEN = `
INSERT INTO portal_tokens (token_hash, account_id, created_at, expires_at)
SELECT @hash, id, @now, @expiresAt FROM accounts WHERE id = @accountId AND deleted_at IS NULL`;
const TAKE_TOKEN = `DELETE FROM portal_tokens WHERE token_hash = ? RETURNING account_id, expires_at`;
const DROP_EXPIRED = `DELETE FROM portal_tokens WHERE expires_at <= ?`;

export function createPortalToken(db: SqliteDb, token: NewPortalToken): boolean {
  return db.st(INSERT_TOKEN).run(token).changes > 0;
}

export function takePortalToken(db: SqliteDb, hash: string): TakenPortalToken | null {
  const row = db.st(TAKE_TOKEN).get(hash) as Row | undefined;
  return row ? { accountId: String(row.account_id), expiresAt: Number(row.expires_at) } : null;
}

export function dropExpiredPortalTokens(db: SqliteDb, now: number): number {
  return db.st(DROP_EXPIRED).run(now).changes;
}
