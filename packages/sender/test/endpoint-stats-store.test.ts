/**
 * Endpoint statistics (design D45) on SQLite and on PostgreSQL: the battery, and each store's
 * statements shown to read an index bounded by the window, never the endpoint's history.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { DELIVERY_STATUSES } from '../src/domain/delivery-state.js';
import { newId } from '../src/domain/ids.js';
import type { SenderStore } from '../src/store/port.js';
import * as pgStats from '../src/store/postgres/endpoint-stats.js';
import { createPostgresStore } from '../src/store/postgres/postgres-store.js';
import * as sqliteStats from '../src/store/sqlite/endpoint-stats.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { deliveryIdsOf } from '../src/store/stats-port.js';
import { planAsTheStore } from './helpers/pg-plans.js';
import { pgSchemas } from './helpers/pg-schemas.js';
import { PG_URL, requireService } from './helpers/services.js';
import { withSqlitePlans } from './helpers/sqlite-plans.js';
import { attemptAtIn, statsBattery } from './helpers/stats-battery.js';

const T0 = Date.UTC(2026, 10, 22, 12);
const HOUR = 3_600_000;
const dir = mkdtempSync(join(tmpdir(), 'linkhooks-stats-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
statsBattery('sqlite', async () => createSqliteStore({ filename: join(dir, `stats-${n++}.db`) }));

const WINDOW = { since: T0 - HOUR, until: T0 + HOUR, bucketMs: HOUR };
/** An endpoint with one succeeded attempt at T0 and one failed at T0 + 1 ms, in the window's second hour. */
async function twoAttempts(store: SenderStore) {
  const accountId = newId('acct');
  const ep = await store.createEndpoint({
    id: newId('ep'),
    accountId,
    url: 'https://receiver.example.com/hook',
    events: ['click'],
    secret: 'whsec_test',
    description: null,
    now: T0 - HOUR,
  });
  await attemptAtIn(store, accountId, T0, true, 7);
  await attemptAtIn(store, accountId, T0 + 1, false, 9);
  return { accountId, endpointId: ep.id };
}

describe('sqlite upgrade', () => {
  it('fills in the endpoint of attempts recorded before the statistics migration', async () => {
    const filename = join(dir, 'upgrade.db');
    let store = createSqliteStore({ filename });
    await store.migrate();
    const { accountId, endpointId } = await twoAttempts(store);
    await store.close();
    // Back to the schema before migration 7: the attempts as an earlier release recorded them.
    const db = new Database(filename);
    // (Its index of deliveries by creation time, dropped since by migration 17, comes back with it.)
    db.exec(`DROP INDEX attempts_by_endpoint;
             ALTER TABLE attempts DROP COLUMN endpoint_id; DELETE FROM schema_migrations WHERE version = 7`);
    db.close();
    store = createSqliteStore({ filename });
    try {
      await store.migrate();
      const stats = await store.endpointStats(accountId, endpointId, WINDOW);
      expect(stats?.buckets).toEqual([{ index: 1, succeeded: 1, failed: 1, meanMs: 8, maxMs: 9 }]);
    } finally {
      await store.close();
    }
  });
});

describe('sqlite plans', () => {
  it('reads attempts and deliveries through covering indexes bounded by the window', async () => {
    await withSqlitePlans(dir, (plan) => {
      const range = { endpointId: 'ep', since: 1, until: 2 };
      expect(plan(sqliteStats.ATTEMPT_BUCKETS, { ...range, bucketMs: 3 })).toMatch(
        /SEARCH attempts USING COVERING INDEX attempts_by_endpoint \(endpoint_id=\? AND started_at>\? AND started_at<\?\)/,
      );
      expect(plan(sqliteStats.DURATION_AT_RANK, { ...range, offset: 0 })).toMatch(
        /SEARCH attempts USING COVERING INDEX attempts_by_endpoint \(endpoint_id=\? AND started_at>\? AND started_at<\?\)/,
      );
      expect(
        plan(sqliteStats.DELIVERIES_OF_STATUS, {
          endpointId: 'ep',
          status: 'failed',
          fromId: 'a',
          untilId: 'b',
        }),
      ).toMatch(
        /SEARCH deliveries USING COVERING INDEX deliveries_by_endpoint \(endpoint_id=\? AND status=\? AND id>\? AND id<\?\)/,
      );
    });
  });
});

const pgUp = await requireService('PostgreSQL', PG_URL);
describe.runIf(pgUp)('postgres', () => {
  const schemas = pgSchemas('lh_stats');
  const { admin } = schemas;
  const freshSchema = schemas.fresh;
  afterAll(schemas.drop);

  statsBattery('postgres', async () =>
    createPostgresStore({ connectionString: PG_URL, schema: freshSchema(), poolSize: 4 }),
  );

  it('fills in the endpoint of attempts recorded before the statistics migration', async () => {
    const schema = freshSchema();
    let store = createPostgresStore({ connectionString: PG_URL, schema, poolSize: 1 });
    await store.migrate();
    const { accountId, endpointId } = await twoAttempts(store);
    await store.close();
    // (Its index of deliveries by creation time, dropped since by migration 21, comes back with it.)
    await admin.query(`DROP INDEX "${schema}".attempts_by_endpoint;
      ALTER TABLE "${schema}".attempts DROP COLUMN endpoint_id; DELETE FROM "${schema}".schema_migrations WHERE version = 8`);
    store = createPostgresStore({ connectionString: PG_URL, schema, poolSize: 1 });
    try {
      await store.migrate();
      const stats = await store.endpointStats(accountId, endpointId, WINDOW);
      expect(stats?.buckets).toEqual([{ index: 1, succeeded: 1, failed: 1, meanMs: 8, maxMs: 9 }]);
    } finally {
      await store.close();
    }
  });

  it('reads only the window’s rows of an endpoint with a long history (EXPLAIN ANALYZE)', async () => {
    const schema = await schemas.migrated();
    const client = await admin.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SET LOCAL search_path = "${schema}"`);
      await client.query(`
        INSERT INTO endpoints (id, account_id, url, events, secret, created_at, updated_at)
        VALUES ('ep', 'acct', 'https://r.example.com/', '["click"]', 'whsec_x', 0, 0),
               ('ep2', 'acct', 'https://r.example.com/', '["click"]', 'whsec_x', 0, 0)`);
      await client.query(
        `INSERT INTO events (id, account_id, name, body, created_at) VALUES ('evt', 'acct', 'click', '\\x7b7d', 0)`,
      );
      // 30 days of history, one delivery and attempt a minute (43,200 rows), for two endpoints.
      // Each delivery's id made at its creation time, as the store makes them.
      const minutes = Array.from({ length: 43_200 }, (_, g) => T0 - (g + 1) * 60_000);
      await client.query(
        `INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, attempts, created_at, updated_at)
         SELECT m.id || e, 'evt', e, 'acct', 'click', CASE WHEN (m.at / 60000) % 3 = 0 THEN 'failed' ELSE 'delivered' END, 1, m.at, m.at
         FROM unnest($1::text[], $2::bigint[]) AS m (id, at), unnest(ARRAY['ep', 'ep2']) e`,
        [minutes.map((at) => newId('dlv', at)), minutes],
      );
      await client.query(
        `INSERT INTO attempts (delivery_id, endpoint_id, number, started_at, duration_ms, status_code, failure_kind, request_headers)
         SELECT id, endpoint_id, 1, created_at, 10 + (created_at / 60000) % 90, 200, NULL, '{}' FROM deliveries`,
      );
      await client.query('ANALYZE attempts');
      await planAsTheStore(client, true);
      await client.query('ANALYZE deliveries');
      const since = T0 - HOUR;
      const analyze = async (sql: string, values: unknown[]) => {
        const [row] = (await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, values)).rows;
        return JSON.stringify(row['QUERY PLAN']);
      };
      const scans = (plan: string) =>
        [
          ...plan.matchAll(
            /"Node Type":"([^"]+)"[^{}]*?"Index Name":"([^"]+)"[^{}]*?"Actual Rows":([\d.]+),"Actual Loops":(\d+)/g,
          ),
        ].map((m) => ({ node: m[1], index: m[2], rows: Math.round(Number(m[3]) * Number(m[4])) })); // rows a loop
      const range = ['ep', since, T0];
      // The last hour holds 60 of the endpoint's 43,200 attempts (T0 - 60 min … T0 - 1 min).
      for (const plan of [
        await analyze(pgStats.ATTEMPT_BUCKETS, [...range, HOUR]),
        await analyze(pgStats.DURATION_PERCENTILES, range),
      ]) {
        expect(plan).not.toMatch(/Seq Scan/);
        expect(scans(plan)).toEqual([{ node: 'Index Only Scan', index: 'attempts_by_endpoint', rows: 60 }]);
      }
      const { fromId, untilId } = deliveryIdsOf({ since, until: T0, bucketMs: HOUR });
      // Prepared and run as the store's connections run it: planned once for any parameters.
      await client.query(`PREPARE by_status (text, text, text, text[]) AS ${pgStats.DELIVERIES_BY_STATUS}`);
      const statuses = DELIVERY_STATUSES.map((s) => `'${s}'`).join(', ');
      const [row] = (
        await client.query(
          `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE by_status ('ep', '${fromId}', '${untilId}', ARRAY[${statuses}])`,
        )
      ).rows;
      const deliveries = JSON.stringify(row['QUERY PLAN']);
      expect(deliveries).not.toMatch(/Seq Scan/);
      expect(deliveries).toMatch(/"Index Cond":"[^"]*\$2/); // the generic plan: its bounds are parameters
      // A range of the index for each status: the window's 60 rows, delivered and failed, and no other.
      expect(scans(deliveries)).toEqual([
        { node: 'Index Only Scan', index: 'deliveries_by_endpoint', rows: 60 },
      ]);
    } finally {
      await client.query('ROLLBACK');
      await client.query('DEALLOCATE ALL');
      client.release();
    }
  });
});
