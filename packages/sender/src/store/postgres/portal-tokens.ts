/**
 * Portal links (design D54): stored by hash, taken once by deleting them. The DELETE … RETURNING
 * locks the row: a second process taking the same link at once waits, then finds it gone.
 */
import type { NewPortalToken, TakenPortalToken } from '../portal-token-port.js';
import type { Pg } from './connection.js';

/** Only for an account that exists and is not being deleted. */
const INSERT_TOKEN = `
INSERT INTO portal_tokens (token_hash, account_id, created_at, expires_at)
SELECT $1, id, $3, $4 FROM accounts WHERE id = $2 AND deleted_at IS NULL
RETURNING token_hash`;
const TAKE_TOKEN = `DELETE FROM portal_tokens WHERE token_hash = $1 RETURNING account_id, expires_at`;
const DROP_EXPIRED = `
WITH gone AS (DELETE FROM portal_tokens WHERE expires_at <= $1 RETURNING 1) SELECT count(*)::int AS n FROM gone`;

export async function createPortalToken(pg: Pg, token: NewPortalToken): Promise<boolean> {
  const rows = await pg.durableRows(INSERT_TOKEN, [token.hash, token.accountId, token.now, token.expiresAt]);
  return rows.length > 0;
}

export async function takePortalToken(pg: Pg, hash: string): Promise<TakenPortalToken | null> {
  const [row] = await pg.durableRows(TAKE_TOKEN, [hash]);
  return row ? { accountId: String(row.account_id), expiresAt: Number(row.expires_at) } : null;
}

export async function dropExpiredPortalTokens(pg: Pg, now: number): Promise<number> {
  const [row] = await pg.rows(DROP_EXPIRED, [now]);
  return Number(row?.n ?? 0);
}
