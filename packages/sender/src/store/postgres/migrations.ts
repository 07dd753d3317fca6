/**
 * Numbered PostgreSQL migrations: SQLite's version 1 adapted. Times are BIGINT epoch
 * milliseconds; an event body is BYTEA, the exact bytes every attempt sends (DESIGN invariant 1) —
 * never jsonb, which reorders keys. Ids are `COLLATE "C"` so the delivery log and its cursors sort
 * by bytes, as in SQLite and in JavaScript, whatever the database's collation.
 *
 * `migrate()` applies them in one transaction under `pg_advisory_xact_lock(MIGRATION_LOCK)`, so
 * two processes migrating at once apply each version exactly once (CONVENTIONS 4). Statements are
 * unqualified: they run with `search_path` set to the store's schema.
 */
import type pg from 'pg';
import * as q from './queries.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The advisory lock key every linkhooks migration runs under (any constant bigint). */
export const MIGRATION_LOCK = '7236405811602834211';

export const PG_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'endpoints, events, deliveries, attempts',
    sql: `
CREATE TABLE endpoints (
  id TEXT COLLATE "C" PRIMARY KEY,
  account_id TEXT COLLATE "C" NOT NULL,
  url TEXT NOT NULL,
  -- An array of event names: jsonb keeps array order, and publish filters with \`events ? name\`.
  events JSONB NOT NULL,
  secret TEXT NOT NULL,
  description TEXT,
  enabled BOOLEAN NOT NULL DEFAULT true,
  consecutive_failures INTEGER NOT NULL DEFAULT 0,
  disabled_reason TEXT,
  disabled_at BIGINT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX endpoints_by_account ON endpoints (account_id, id);

CREATE TABLE events (
  id TEXT COLLATE "C" PRIMARY KEY,
  account_id TEXT COLLATE "C" NOT NULL,
  name TEXT NOT NULL,
  body BYTEA NOT NULL,
  created_at BIGINT NOT NULL
);

CREATE TABLE deliveries (
  id TEXT COLLATE "C" PRIMARY KEY,
  event_id TEXT COLLATE "C" NOT NULL REFERENCES events (id),
  endpoint_id TEXT COLLATE "C" NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  account_id TEXT COLLATE "C" NOT NULL,
  event_name TEXT NOT NULL,
  status TEXT NOT NULL
    CHECK (status IN ('pending', 'awaiting_retry', 'delivered', 'failed', 'held', 'skipped')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at BIGINT,
  lease_token TEXT,
  lease_expires_at BIGINT,
  last_failure_kind TEXT,
  last_status_code INTEGER,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
-- Only claimable rows are indexed by due time: a million future retries cost the claim nothing.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status IN ('pending', 'awaiting_retry');
CREATE INDEX deliveries_leased ON deliveries (lease_expires_at, endpoint_id) WHERE lease_expires_at IS NOT NULL;
CREATE INDEX deliveries_by_account ON deliveries (account_id, id);
CREATE INDEX deliveries_by_endpoint ON deliveries (endpoint_id, id);
CREATE INDEX deliveries_by_event ON deliveries (event_id);
CREATE INDEX deliveries_final ON deliveries (updated_at) WHERE status IN ('delivered', 'failed', 'skipped');

CREATE TABLE attempts (
  delivery_id TEXT COLLATE "C" NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  number INTEGER NOT NULL,
  started_at BIGINT NOT NULL,
  duration_ms INTEGER NOT NULL,
  status_code INTEGER,
  failure_kind TEXT,
  error_message TEXT,
  response_snippet TEXT,
  next_attempt_at BIGINT,
  -- TEXT, not jsonb: the headers as recorded, in the order they were sent.
  request_headers TEXT NOT NULL,
  PRIMARY KEY (delivery_id, number)
);
`,
  },
  {
    version: 2,
    name: 'accounts',
    sql: `
CREATE TABLE accounts (
  id TEXT COLLATE "C" PRIMARY KEY,
  name TEXT NOT NULL,
  plan TEXT NOT NULL CHECK (plan IN ('free', 'pro', 'business', 'enterprise')),
  -- SHA-256 of the API key: the key is shown once and never stored.
  api_key_hash TEXT COLLATE "C" NOT NULL UNIQUE,
  created_at BIGINT NOT NULL
);
`,
  },
  {
    version: 3,
    name: 'leases',
    // A claim used to write the lease into the delivery row's indexed columns: a new version of
    // the row and an entry in each of its seven indexes, all written again when the attempt
    // finished. A lease is now a row of its own (claim = insert, finish = delete) in a table that
    // holds only what is in flight, which is what the per-endpoint cap counts. The delivery keeps
    // its lease expiry, no longer indexed, so that a claim's write of it is a heap-only (HOT)
    // update — and a concurrent claimer that locks the row after it re-checks it (see CLAIM_DUE);
    // the free space left in each page is what lets that update stay on its page.
    // Leases held while migrating move over unchanged.
    sql: `
CREATE TABLE leases (
  delivery_id TEXT COLLATE "C" PRIMARY KEY,
  endpoint_id TEXT COLLATE "C" NOT NULL,
  token TEXT NOT NULL,
  expires_at BIGINT NOT NULL
);
INSERT INTO leases (delivery_id, endpoint_id, token, expires_at)
SELECT id, endpoint_id, lease_token, lease_expires_at FROM deliveries
WHERE lease_token IS NOT NULL AND lease_expires_at IS NOT NULL;
DROP INDEX deliveries_leased;
ALTER TABLE deliveries DROP COLUMN lease_token;
ALTER TABLE deliveries SET (fillfactor = 85);
`,
  },
];

/**
 * Applies the migrations not yet recorded in `schema_migrations`, creating the schema first.
 * Run inside one transaction: the advisory lock is held until it ends, so a second process waits,
 * then finds every version recorded and applies nothing.
 */
export async function applyMigrations(client: pg.ClientBase, schema: string): Promise<void> {
  const quoted = q.quoteSchema(schema);
  await client.query(q.LOCK_MIGRATIONS, [MIGRATION_LOCK]);
  // Checked first: CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege on the database even
  // when the schema exists, which the owner of a DBA-provisioned schema may not have.
  if ((await client.query(q.SCHEMA_EXISTS, [schema])).rowCount === 0) {
    await client.query(q.CREATE_SCHEMA(quoted));
  }
  await client.query(q.USE_SCHEMA, [quoted]);
  await client.query(q.CREATE_MIGRATIONS_TABLE);
  const applied = new Set(
    (await client.query<{ version: number }>(q.SELECT_APPLIED_MIGRATIONS)).rows.map((r) => r.version),
  );
  for (const m of PG_MIGRATIONS) {
    if (applied.has(m.version)) continue;
    await client.query(m.sql);
    await client.query(q.RECORD_MIGRATION, [m.version, m.name, Date.now()]);
  }
}
