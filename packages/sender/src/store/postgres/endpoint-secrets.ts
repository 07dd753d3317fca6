/** Endpoint secrets across accounts, for sealing them in bounded steps (design D29, D30). */
import type { SecretChange } from '../port.js';
import type { Pg } from './connection.js';

// substr rather than LIKE: `_` in a key id or base64url is no wildcard here.
const SELECT_NOT_SEALED = `
SELECT id, secret, previous_secret FROM endpoints
WHERE id > $1
  AND (substr(secret, 1, $2::int) <> $3
       OR (previous_secret IS NOT NULL AND substr(previous_secret, 1, $2::int) <> $3))
ORDER BY id LIMIT $4`;
/**
 * One statement for the batch, compare-and-set per row: a secret changed since it was read
 * (another process sealing at once, a rotation through the API) is left alone, and so is a row
 * whose previous secret changed, when the change carries one (design D38).
 */
const REPLACE_SECRETS = `
UPDATE endpoints e SET secret = c.next, previous_secret = coalesce(c.next_previous, e.previous_secret)
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
  AS c(id, prev, next, prev_previous, next_previous)
WHERE e.id = c.id AND e.secret = c.prev
  AND (c.prev_previous IS NULL OR e.previous_secret = c.prev_previous)
RETURNING e.id`;

export async function secretsNotSealedWith(
  pg: Pg,
  prefix: string,
  after: string | null,
  limit: number,
): Promise<{ id: string; secret: string; previousSecret?: string }[]> {
  const rows = await pg.rows(SELECT_NOT_SEALED, [after ?? '', prefix.length, prefix, limit]);
  return rows.map((r) => ({
    id: String(r.id),
    secret: String(r.secret),
    ...(r.previous_secret == null ? {} : { previousSecret: String(r.previous_secret) }),
  }));
}

export async function replaceSecrets(pg: Pg, changes: readonly SecretChange[]): Promise<string[]> {
  if (changes.length === 0) return [];
  const rows = await pg.durableRows(REPLACE_SECRETS, [
    changes.map((c) => c.id),
    changes.map((c) => c.from),
    changes.map((c) => c.to),
    changes.map((c) => c.previous?.from ?? null),
    changes.map((c) => c.previous?.to ?? null),
  ]);
  return rows.map((r) => String(r.id));
}
