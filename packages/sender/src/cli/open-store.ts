/**
 * `--db` → a migrated store. `sqlite:<file>` opens the embedded store; `postgres://…` the shared
 * one (`?schema=NAME` picks the schema, default `linkhooks`). An unreachable or unusable database
 * is a clear error naming it — with any password masked — never a stack trace.
 */
import { SenderError } from '../errors.js';
import type { MigrationReport } from '../store/migration-plan.js';
import type { SenderStore } from '../store/port.js';
import { createPostgresStore } from '../store/postgres/postgres-store.js';
import { isSchemaName } from '../store/postgres/schema-name.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import { DatabaseError } from './database-error.js';
import { loadDriver } from './sqlite-driver.js';
import { sqliteFileOf } from './sqlite-url.js';

/** The URL with its password replaced, for messages and logs. */
export function maskDb(db: string): string {
  if (!db.startsWith('postgres')) return db;
  try {
    const url = new URL(db);
    if (url.password) url.password = '****';
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
  let url: URL;
  try {
    url = new URL(db);
  } catch {
    throw new DatabaseError(`--db is not a valid PostgreSQL URL: ${maskDb(db)}`);
  }
  const schema = url.searchParams.get('schema');
  url.searchParams.delete('schema');
  if (schema !== null && !isSchemaName(schema)) {
    throw new DatabaseError('?schema= must be a lowercase identifier ([a-z_][a-z0-9_]*)');
  }
  return { connectionString: url.toString(), ...(schema ? { schema } : {}) };
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
    const e = error as NodeJS.ErrnoException & AggregateError;
    const reason = e.code ?? (e.errors?.[0] as Error | undefined)?.message ?? e.message;
    if (error instanceof SenderError) throw error;
    throw new DatabaseError(`cannot reach the database ${maskDb(db)}: ${reason}`);
  }
  onMigrated?.(report);
  return store;
}
