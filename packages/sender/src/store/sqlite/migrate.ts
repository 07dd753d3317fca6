/**
 * Applies the numbered migrations in `migrations/` not yet recorded (whatever their order, so a
 * gap in the numbers is fine), inside `BEGIN IMMEDIATE`,
 * which takes SQLite's write lock first: two processes migrating at once apply each version once.
 * Then each endpoint's next due time is computed afresh (endpoint-due.ts).
 */
import { type MigrationReport, planMigrations } from '../migration-plan.js';
import type { SqliteDb } from './database.js';
import { rebuildDue } from './endpoint-due.js';
import m001 from './migrations/001-endpoints-events-deliveries-attempts.sql';
import m002 from './migrations/002-accounts.sql';
import m003 from './migrations/003-bounded-hot-paths.sql';
import m004 from './migrations/004-endpoint-origin.sql';
import m005 from './migrations/005-standard-webhooks-rotation-test.sql';
import m006 from './migrations/006-operations.sql';
import m007 from './migrations/007-endpoint-stats.sql';
import m008 from './migrations/008-skipped-by-endpoint.sql';
import m009 from './migrations/009-operator-notices.sql';
import m010 from './migrations/010-event-search.sql';
import m011 from './migrations/011-portal-tokens.sql';
import m012 from './migrations/012-one-index-of-queued-deliveries.sql';
import m013 from './migrations/013-queued-deliveries-by-due-time.sql';
import m014 from './migrations/014-log-pages-by-status.sql';
import m015 from './migrations/015-endpoint-next-due.sql';
import m016 from './migrations/016-due-index-holds-leases.sql';
import m017 from './migrations/017-deliveries-counted-by-id.sql';
import m018 from './migrations/018-partial-indexes-without-in-lists.sql';
import m019 from './migrations/019-endpoints-deleted-in-steps.sql';
import m020 from './migrations/020-queues-moved-in-steps.sql';
import m021 from './migrations/021-expiring-secrets.sql';

export const SQLITE_MIGRATIONS = [
  { version: 1, name: 'endpoints, events, deliveries, attempts', sql: m001 },
  { version: 2, name: 'accounts', sql: m002 },
  { version: 3, name: 'bounded hot paths', sql: m003 },
  { version: 4, name: 'endpoint origin', sql: m004 },
  { version: 5, name: 'standard webhooks, rotation grace, test deliveries', sql: m005 },
  { version: 6, name: 'operations: pause, recovery, idempotent ingest, API keys', sql: m006 },
  { version: 7, name: 'endpoint statistics', sql: m007 },
  { version: 8, name: 'skipped deliveries by endpoint', sql: m008 },
  { version: 9, name: 'operator notices', sql: m009 },
  { version: 10, name: 'log search by click and conversion', sql: m010 },
  { version: 11, name: 'portal links', sql: m011 },
  { version: 12, name: 'one index of queued deliveries', sql: m012 },
  { version: 13, name: 'queued deliveries by due time', sql: m013 },
  { version: 14, name: 'log pages by status', sql: m014 },
  { version: 15, name: 'endpoint next due', sql: m015 },
  { version: 16, name: 'due index holds leases', sql: m016 },
  { version: 17, name: 'deliveries counted by id', sql: m017 },
  { version: 18, name: 'partial indexes without IN lists', sql: m018 },
  { version: 19, name: 'endpoints deleted in steps', sql: m019 },
  { version: 20, name: 'queues moved in steps', sql: m020 },
  { version: 21, name: 'expiring secrets', sql: m021 },
] as const;

const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`;
const SELECT_APPLIED = `SELECT version FROM schema_migrations`;
const RECORD_MIGRATION = `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`;

export function migrateSqlite(db: SqliteDb): () => MigrationReport {
  return db.immediate(() => {
    db.exec(CREATE_MIGRATIONS_TABLE);
    const recorded = (db.st(SELECT_APPLIED).all() as { version: number }[]).map((r) => r.version);
    const { pending, report } = planMigrations(SQLITE_MIGRATIONS, recorded);
    for (const m of pending) {
      db.exec(m.sql);
      db.st(RECORD_MIGRATION).run(m.version, m.name, Date.now());
    }
    rebuildDue(db);
    return report;
  });
}
