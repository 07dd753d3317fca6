/**
 * `--db` → a migrated store. `sqlite:<file>` opens the embedded store; `postgres://…` the shared
 * one (`?schema=NAME` picks the schema, default `linkhooks`). An unreachable or unusable database
 * is a clear error naming it — with any password masked — never a stack trace.
 */
import { SenderError } from '../errors.js';
import type { MigrationReport } from '../store/migration-plan.js';
import type { SenderStore } from '../store/port.js';
import { createPostgresStore } from '../store/postgres/postgres-store.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import { DatabaseError } from './database-error.js';
import { postgresUrlProblem } from './postgres-url.js';
import { loadDriver } from './sqlite-driver.js';
import { sqliteFileOf } from './sqlite-url.js';

/**
 * The query parameters `pg` reads a password from, beside the URL's own `user:password@`
 * (pg-connection-string): `?password=` and the client key's `?sslpassword=`.
 */
const PASSWORD_PARAMS = ['password', 'sslpassword'];

/** The URL with its passwords replaced, for messages and logs. */
export function maskDb(db: string): string {
  if (!db.startsWith('postgres')) return db;
  try {
    const url = new URL(db);
    if (url.password) url.password = '****';
    for (const name of PASSWORD_PARAMS) if (url.searchParams.has(name)) url.searchParams.set(name, '****');
    return url.toString();
  } catch {
    return 'postgres://…';
  }
}

/**
 * The PostgreSQL store's connection settings for a `postgres://` URL. A URL without a password
 * leaves it to `pg`, which takes `PGPASSWORD` (or `~/.pgpass`) from the environment.
 *
 * @example
 * postgresOptions('postgres://linkhooks@db:5432/linkhooks?schema=acme');
 * // { connectionString: 'postgres://linkhooks@db:5432/linkhooks', schema: 'acme' }
 */
export function postgresOptions(db: string) {
  const problem = postgresUrlProblem(db);
  if (problem !== null) throw new DatabaseError(`--db ${problem}: ${maskDb(db)}`);
  const url = new URL(db);
  const schema = url.searchParams.get('schema');
  url.searchParams.delete('schema');
  return { connectionString: url.toString(), ...(schema ? { schema } : {}) };
}

/** What to do about the errors PostgreSQL answers a start with most often, by SQLSTATE. */
const SERVER_HINTS: Record<string, string> = {
  '3D000': 'create it (createdb), or name one that exists in the URL',
  '28000': 'name a role that exists in the URL, or create it',
  '28P01': 'check the password (in the URL, PGPASSWORD or ~/.pgpass)',
  '42501': 'the role needs the right to create the schema and its tables (GRANT CREATE ON DATABASE …)',
};

/**
 * A failed start's message: the server's own words and what to do when the database answered
 * (its bare SQLSTATE, worded "cannot reach", left the operator to look it up), the network's code
 * when it did not.
 */
export function databaseProblem(error: unknown, db: string): string {
  const e = error as NodeJS.ErrnoException & AggregateError & { severity?: unknown };
  if (typeof e.severity === 'string') {
    // 28000 is also the server's pg_hba.conf refusing this host or a connection without TLS.
    const hint = /pg_hba/.test(e.message)
      ? 'allow this host in pg_hba.conf, or connect with TLS (?sslmode=require)'
      : SERVER_HINTS[e.code ?? ''];
    return `the database ${db} refused: ${e.message} (${e.code})${hint ? `; ${hint}` : ''}`;
  }
  const reason = e.code ?? (e.errors?.[0] as Error | undefined)?.message ?? e.message;
  return `cannot reach the database ${db}: ${reason}`;
}

/**
 * Opens the store and applies pending migrations (safe from several processes at once);
 * `onMigrated` is told what the run did.
 */
export async function openStore(
  db: string,
  onMigrated?: (report: MigrationReport | undefined) => void,
): Promise<SenderStore> {
  let store: SenderStore;
  const file = sqliteFileOf(db);
  if (file !== undefined) loadDriver();
  try {
    store =
      file !== undefined ? createSqliteStore({ filename: file }) : createPostgresStore(postgresOptions(db));
  } catch (error) {
    if (error instanceof DatabaseError) throw error;
    throw new DatabaseError(`cannot open the database ${maskDb(db)}: ${(error as Error).message}`);
  }
  let report: MigrationReport | undefined;
  try {
    report = (await store.migrate()) ?? undefined;
  } catch (error) {
    await store.close().catch(() => undefined);
    if (error instanceof SenderError) throw error;
    throw new DatabaseError(databaseProblem(error, maskDb(db)));
  }
  onMigrated?.(report);
  return store;
}
