/** Endpoint secrets across accounts, for sealing them in bounded steps (design D29, D30). */
import type { SecretChange } from '../port.js';
import type { Pg } from './connection.js';

// substr rather than LIKE: `_` in a key id or base64url is no wildcard here.
const SELECT_NOT_SEALED = `
SELECT id, secret FROM endpoints
WHERE id > $1 AND substr(secret, 1, $2::int) <> $3
ORDER BY id LIMIT $4`;
/**
 * One statement for the batch, compare-and-set per row: a secret changed since it was read
 * (another process sealing at once, a rotation through the API) is left alone.
 */
const REPLACE_SECRETS = `
UPDATE endpoints e SET secret = c.next
FROM unnest($1::text[], $2::text[], $3::text[]) AS c(id, prev, next)
WHERE e.id = c.id AND e.secret = c.prev
RETURNING e.id`;

export async function secretsNotSealedWith(
  pg: Pg,
  prefix: string,
  after: string | null,
  limit: number,
): Promise<{ id: string; secret: string }[]> {
  const rows = await pg.rows(SELECT_NOT_SEALED, [after ?? '', prefix.length, prefix, limit]);
  return rows.map((r) => ({ id: String(r.id), secret: String(r.secret) }));
}

export async function replaceSecrets(pg: Pg, changes: readonly SecretChange[]): Promise<string[]> {
  if (changes.length === 0) return [];
  const rows = await pg.rows(REPLACE_SECRETS, [
    changes.map((c) => c.id),
    changes.map((c) => c.from),
    changes.map((c) => c.to),
  ]);
  return rows.map((r) => String(r.id));
}
