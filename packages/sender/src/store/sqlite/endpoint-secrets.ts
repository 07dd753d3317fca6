/** Endpoint secrets across accounts, for sealing them in bounded steps (design D29, D30). */
import type { SecretChange } from '../port.js';
import type { SqliteDb } from './database.js';

// substr rather than LIKE: `_` in a key id or base64url is no wildcard here.
const SELECT_NOT_SEALED = `
SELECT id, secret FROM endpoints
WHERE id > ? AND substr(secret, 1, ?) <> ?
ORDER BY id LIMIT ?`;
/** Compare-and-set: a secret changed since it was read (another process, a rotation) is left alone. */
const REPLACE_SECRET = `UPDATE endpoints SET secret = ? WHERE id = ? AND secret = ?`;

export function secretsNotSealedWith(
  db: SqliteDb,
  prefix: string,
  after: string | null,
  limit: number,
): { id: string; secret: string }[] {
  return db.st(SELECT_NOT_SEALED).all(after ?? '', prefix.length, prefix, limit) as {
    id: string;
    secret: string;
  }[];
}

export function replaceSecrets(db: SqliteDb) {
  return db.immediate((changes: readonly SecretChange[]): string[] =>
    changes.filter((c) => db.st(REPLACE_SECRET).run(c.to, c.id, c.from).changes > 0).map((c) => c.id),
  );
}
