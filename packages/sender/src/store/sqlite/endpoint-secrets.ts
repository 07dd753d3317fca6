/** Endpoint secrets across accounts, for sealing them in bounded steps (design D29, D30). */
import type { SecretChange } from '../port.js';
import { countParam, type SqliteDb } from './database.js';

// substr rather than LIKE: `_` in a key id or base64url is no wildcard here.
const SELECT_NOT_SEALED = `
SELECT id, secret, previous_secret FROM endpoints
WHERE id > @after
  AND (substr(secret, 1, @n) <> @prefix OR (previous_secret IS NOT NULL AND substr(previous_secret, 1, @n) <> @prefix))
ORDER BY id LIMIT ${countParam('limit')}`;
/**
 * Compare-and-set: a secret changed since it was read (another process, a rotation) is left alone,
 * and so is a row whose previous secret changed, when the change carries one (design D38).
 */
const REPLACE_SECRET = `
UPDATE endpoints SET secret = @to, previous_secret = coalesce(@previousTo, previous_secret)
WHERE id = @id AND secret = @from AND (@previousFrom IS NULL OR previous_secret = @previousFrom)`;

export function secretsNotSealedWith(
  db: SqliteDb,
  prefix: string,
  after: string | null,
  limit: number,
): { id: string; secret: string; previousSecret?: string }[] {
  const rows = db.st(SELECT_NOT_SEALED).all({ after: after ?? '', n: prefix.length, prefix, limit }) as {
    id: string;
    secret: string;
    previous_secret: string | null;
  }[];
  return rows.map((r) => ({
    id: r.id,
    secret: r.secret,
    ...(r.previous_secret === null ? {} : { previousSecret: r.previous_secret }),
  }));
}

export function replaceSecrets(db: SqliteDb) {
  return db.immediate((changes: readonly SecretChange[]): string[] =>
    changes
      .filter(
        (c) =>
          db.st(REPLACE_SECRET).run({
            id: c.id,
            from: c.from,
            to: c.to,
            previousFrom: c.previous?.from ?? null,
            previousTo: c.previous?.to ?? null,
          }).changes > 0,
      )
      .map((c) => c.id),
  );
}
