/** API keys (design D37): found by hash, listed, rotated with a grace, revoked; never stored in clear. */
import type { KeyHolder, NewApiKey } from '../port.js';
import type { ApiKeyRecord } from '../records.js';
import { ACCOUNT_COLUMNS_AS_A, toApiKey, toKeyHolder } from '../rows.js';
import type { Pg } from './connection.js';

/** A key that works at `$1`, with its account (not being deleted). */
const WORKING_KEY = `
SELECT k.*, ${ACCOUNT_COLUMNS_AS_A}
FROM api_keys k JOIN accounts a ON a.id = k.account_id
WHERE k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > $1) AND a.deleted_at IS NULL`;
const FIND_KEY = `${WORKING_KEY} AND k.key_hash = $2`;
const GET_KEY = `${WORKING_KEY} AND k.id = $2`;
/** To the minute: a key in use costs one write a minute, not one per request. */
const TOUCH_KEY = `
UPDATE api_keys SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $2::bigint - 60000)`;
const LIST_KEYS = `SELECT * FROM api_keys WHERE account_id = $1 ORDER BY created_at, id`;
/** The account is locked, so a deletion cannot slip between its check and the new key. */
const LOCK_ACCOUNT = `SELECT 1 FROM accounts WHERE id = $1 AND deleted_at IS NULL FOR UPDATE`;
const INSERT_KEY = `
INSERT INTO api_keys (id, account_id, prefix, key_hash, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING *`;
const EXPIRE_OTHERS = `
UPDATE api_keys SET expires_at = $3
WHERE account_id = $1 AND id <> $2 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $3)
RETURNING *`;
const REVOKE_KEY = `
UPDATE api_keys SET revoked_at = coalesce(revoked_at, $3) WHERE id = $1 AND account_id = $2 RETURNING *`;

export async function findApiKey(pg: Pg, hash: string, now: number): Promise<KeyHolder | null> {
  const [row] = await pg.rows(FIND_KEY, [now, hash]);
  return row ? toKeyHolder(row) : null;
}

export async function getApiKey(pg: Pg, id: string, now: number): Promise<KeyHolder | null> {
  const [row] = await pg.rows(GET_KEY, [now, id]);
  return row ? toKeyHolder(row) : null;
}

export async function touchApiKey(pg: Pg, id: string, now: number): Promise<void> {
  await pg.rows(TOUCH_KEY, [id, now]);
}

export async function listApiKeys(pg: Pg, accountId: string): Promise<ApiKeyRecord[]> {
  return (await pg.rows(LIST_KEYS, [accountId])).map(toApiKey);
}

export async function rotateApiKey(
  pg: Pg,
  accountId: string,
  key: NewApiKey,
  { now, expireOthersAt }: { now: number; expireOthersAt: number },
): Promise<{ key: ApiKeyRecord; others: ApiKeyRecord[] } | null> {
  return pg.durableTx(async (client) => {
    if ((await client.query(LOCK_ACCOUNT, [accountId])).rowCount === 0) return null;
    const created = (await client.query(INSERT_KEY, [key.id, accountId, key.prefix, key.hash, now])).rows[0];
    const others = (await client.query(EXPIRE_OTHERS, [accountId, key.id, expireOthersAt])).rows;
    return { key: toApiKey(created), others: others.map(toApiKey) };
  });
}

export async function revokeApiKey(
  pg: Pg,
  accountId: string,
  id: string,
  now: number,
): Promise<ApiKeyRecord | null> {
  const [row] = await pg.durableRows(REVOKE_KEY, [id, accountId, now]);
  return row ? toApiKey(row) : null;
}
