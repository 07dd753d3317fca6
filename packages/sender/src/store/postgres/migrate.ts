/**
 * Applies the numbered migrations in `migrations/` not yet recorded in `schema_migrations`
 * (whatever their order, so a gap in the numbers is fine), creating the schema first, in one transaction under an advisory lock: two processes migrating
 * at once apply each version exactly once (design C4). Times are BIGINT epoch milliseconds; an
 * event body is BYTEA, the exact bytes every attempt sends (design I1), never jsonb, which reorders
 * keys. Ids are `COLLATE "C"` so the log and its cursors sort by bytes, as in SQLite and JavaScript.
 */
import type pg from 'pg';
import { type MigrationReport, planMigrations } from '../migration-plan.js';
import m001 from './migrations/001-endpoints-events-deliveries-attempts.sql';
import m002 from './migrations/002-accounts.sql';
import m003 from './migrations/003-leases.sql';
import m004 from './migrations/004-bounded-hot-paths.sql';
import m005 from './migrations/005-endpoint-origin.sql';
import m006 from './migrations/006-standard-webhooks-rotation-test.sql';
import m007 from './migrations/007-operations.sql';
import m008 from './migrations/008-endpoint-stats.sql';
import m009 from './migrations/009-operator-notices.sql';
import m010 from './migrations/010-deleted-accounts.sql';
import m011 from './migrations/011-event-search.sql';
import m012 from './migrations/012-portal-tokens.sql';
import m013 from './migrations/013-leases-keep-end-pages.sql';
import m014 from './migrations/014-one-index-of-queued-deliveries.sql';
import m015 from './migrations/015-leases-only-in-their-table.sql';
import m016 from './migrations/016-deliveries-pages-full.sql';
import m017 from './migrations/017-queued-deliveries-by-due-time.sql';
import m018 from './migrations/018-log-pages-by-status.sql';
import m019 from './migrations/019-endpoint-due.sql';
import m020 from './migrations/020-hot-tables-without-foreign-keys.sql';
import m021 from './migrations/021-deliveries-counted-by-id.sql';
import m022 from './migrations/022-endpoints-deleted-in-steps.sql';
import m023 from './migrations/023-queues-moved-in-steps.sql';
import m024 from './migrations/024-expiring-secrets.sql';
import { quoteSchema } from './schema-name.js';

export const PG_MIGRATIONS = [
  { version: 1, name: 'endpoints, events, deliveries, attempts', sql: m001 },
  { version: 2, name: 'accounts', sql: m002 },
  { version: 3, name: 'leases', sql: m003 },
  { version: 4, name: 'bounded hot paths', sql: m004 },
  { version: 5, name: 'endpoint origin', sql: m005 },
  { version: 6, name: 'standard webhooks, rotation grace, test deliveries', sql: m006 },
  { version: 7, name: 'operations: pause, recovery, idempotent ingest, API keys', sql: m007 },
  { version: 8, name: 'endpoint statistics', sql: m008 },
  { version: 9, name: 'operator notices', sql: m009 },
  { version: 10, name: 'deleted accounts', sql: m010 },
  { version: 11, name: 'log search by click and conversion', sql: m011 },
  { version: 12, name: 'portal links', sql: m012 },
  { version: 13, name: 'leases keep their end pages', sql: m013 },
  { version: 14, name: 'one index of queued deliveries', sql: m014 },
  { version: 15, name: 'leases only in their table', sql: m015 },
  { version: 16, name: 'deliveries pages full', sql: m016 },
  { version: 17, name: 'queued deliveries by due time', sql: m017 },
  { version: 18, name: 'log pages by status', sql: m018 },
  { version: 19, name: 'endpoint due times', sql: m019 },
  { version: 20, name: 'hot tables without foreign keys', sql: m020 },
  { version: 21, name: 'deliveries counted by id', sql: m021 },
  { version: 22, name: 'endpoints deleted in steps', sql: m022 },
  { version: 23, name: 'queues moved in steps', sql: m023 },
  { version: 24, name: 'expiring secrets', sql: m024 },
] as const;

/** The advisory lock key every linkhooks migration runs under (any constant bigint). */
export const MIGRATION_LOCK = '7236405811602834211';

const LOCK_MIGRATIONS = `SELECT pg_advisory_xact_lock($1::bigint)`;
const SCHEMA_EXISTS = `SELECT 1 FROM pg_namespace WHERE nspname = $1`;
/** `SET LOCAL search_path`, bound: `$1` is the quoted schema. */
const USE_SCHEMA = `SELECT set_config('search_path', $1, true)`;
const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at BIGINT NOT NULL
)`;
const SELECT_APPLIED = `SELECT version FROM schema_migrations`;
const RECORD_MIGRATION = `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`;

/** Run inside one transaction: a second process waits for the lock, then finds every version recorded. */
export async function applyMigrations(client: pg.ClientBase, schema: string): Promise<MigrationReport> {
  const quoted = quoteSchema(schema);
  await client.query(LOCK_MIGRATIONS, [MIGRATION_LOCK]);
  // Checked first: CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege on the database even
  // when the schema exists, which the owner of a DBA-provisioned schema may not have.
  if ((await client.query(SCHEMA_EXISTS, [schema])).rowCount === 0) {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoted}`);
  }
  await client.query(USE_SCHEMA, [quoted]);
  await client.query(CREATE_MIGRATIONS_TABLE);
  const recorded = (await client.query<{ version: number }>(SELECT_APPLIED)).rows.map((r) => r.version);
  const { pending, report } = planMigrations(PG_MIGRATIONS, recorded);
  for (const m of pending) {
    await client.query(m.sql);
    await client.query(RECORD_MIGRATION, [m.version, m.name, Date.now()]);
  }
  return report;
}
