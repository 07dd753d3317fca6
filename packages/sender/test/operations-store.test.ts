/**
 * The operations battery (test/helpers/operations-battery.ts) on SQLite and on PostgreSQL, and on
 * PostgreSQL what only a shared database can show: one platform event id published at once through
 * several store instances (several processes' connections) is stored once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { newId } from '../src/domain/ids.js';
import type { SenderStore } from '../src/store/port.js';
import { STEP_OF_ACCOUNT } from '../src/store/postgres/delete-deliveries.js';
import { DROP_EXPIRED_SECRETS } from '../src/store/postgres/endpoints.js';
import { createPostgresStore } from '../src/store/postgres/postgres-store.js';
import { COUNT_FAILED, RECOVER } from '../src/store/postgres/recover.js';
import { MOVES } from '../src/store/postgres/settle-queue.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { operationsBattery } from './helpers/operations-battery.js';
import { pgSchemas } from './helpers/pg-schemas.js';
import { PG_URL, requireService } from './helpers/services.js';

const dir = mkdtempSync(join(tmpdir(), 'linkhooks-operations-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
operationsBattery('sqlite', async () => createSqliteStore({ filename: join(dir, `ops-${n++}.db`) }));

it('trims a delivery that gathered attempts before they were kept to a number, 1,000 at a time', async () => {
  const file = join(dir, `trim-${n++}.db`);
  const store = createSqliteStore({ filename: file });
  try {
    await store.migrate();
    const at = Date.UTC(2026, 11, 7);
    const endpoint = await store.createEndpoint({
      id: newId('ep'),
      accountId: 'acct_t',
      url: 'https://receiver.example.com/hook',
      events: ['click'],
      secret: 'whsec_test',
      description: null,
      now: at,
    });
    const event = {
      id: newId('evt'),
      accountId: 'acct_t',
      name: 'click',
      body: Buffer.from('{}'),
      createdAt: at,
    };
    const [delivery] = (await store.publish(event as never, () => newId('dlv'))).deliveries;
    // 1,500 attempts, as an older version could keep.
    const raw = new Database(file);
    raw.exec(`WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 1500)
      INSERT INTO attempts (delivery_id, number, started_at, duration_ms, status_code, request_headers, endpoint_id)
      SELECT '${delivery!.id}', i, ${at} + i, 5, 500, '{}', '${endpoint.id}' FROM k`);
    raw.exec(`UPDATE deliveries SET attempts = 1500, status = 'failed' WHERE id = '${delivery!.id}'`);
    const kept = () =>
      raw
        .prepare('SELECT count(*) AS n, min(number) AS first FROM attempts WHERE delivery_id = ?')
        .get(delivery!.id);
    expect(await store.retryNow('acct_t', delivery!.id, at + 5_000)).toMatchObject({ ok: true });
    expect(kept()).toEqual({ n: 500, first: 1001 });
    expect(await store.retryNow('acct_t', delivery!.id, at + 6_000)).toMatchObject({ ok: true });
    expect(kept()).toEqual({ n: 99, first: 1402 });
    raw.close();
  } finally {
    await store.close();
  }
});

const pgUp = await requireService('PostgreSQL', PG_URL);
describe.runIf(pgUp)('postgres', () => {
  const schemas = pgSchemas('lh_ops');
  const { admin } = schemas;
  const freshSchema = schemas.fresh;
  afterAll(schemas.drop);

  operationsBattery('postgres', async () =>
    createPostgresStore({ connectionString: PG_URL, schema: freshSchema(), poolSize: 4 }),
  );

  it('moves, recovers and deletes deliveries through their own indexes, never a scan of the log', async () => {
    const schema = await schemas.migrated();
    const client = await admin.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SET LOCAL search_path = "${schema}"`);
      // Whether an index can serve the statement at all, not which plan a tiny table gets.
      await client.query('SET LOCAL enable_seqscan = off');
      const plan = async (sql: string, values: unknown[]) =>
        (await client.query(`EXPLAIN ${sql}`, values)).rows.map((r) => r['QUERY PLAN']).join('\n');
      for (const [move, sql] of Object.entries(MOVES)) {
        const shown = await plan(sql, move === 'release' ? ['ep', 1000, 1, null] : ['ep', 1000, 1]);
        const index =
          move === 'hold' || move === 'release' ? 'deliveries_queued_by_endpoint' : 'deliveries_by_endpoint';
        expect(shown, move).toMatch(new RegExp(`Index (Only )?Scan using ${index}`));
        expect(shown, move).not.toMatch(/Seq Scan on deliveries/);
      }
      expect(await plan(RECOVER, ['ep', 1, 2, 3, 10])).toMatch(/Index Scan using deliveries_failed/);
      expect(await plan(COUNT_FAILED, ['ep', 1, 2, 100])).toMatch(/deliveries_failed/);
      expect(await plan(RECOVER, ['ep', 1, 2, 3, 10])).not.toMatch(/Seq Scan on deliveries/);
      // An account's deletion step reads its own deliveries from their index, in the index's
      // order: never the primary key filtered by account, past every other account's, nor a sort
      // of all of its own.
      const step = await plan(STEP_OF_ACCOUNT, ['acct', 1000]);
      expect(step).toMatch(/Index (Only )?Scan using deliveries_by_account/);
      expect(step).not.toMatch(/deliveries_pkey|Sort/);
      // The hourly drop of previous secrets past their grace reads only the endpoints holding one.
      expect(await plan(DROP_EXPIRED_SECRETS, [1])).toMatch(
        /Index Scan (using|on) endpoints_secret_expiring/,
      );
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it('updates the rows a move picks by key, whatever the statistics say of their status', async () => {
    const schema = await schemas.migrated();
    const client = await admin.connect();
    try {
      await client.query(`SET search_path = "${schema}"`);
      await client.query(
        `INSERT INTO endpoints (id, account_id, url, events, secret, created_at, updated_at)
         VALUES ('ep', 'acct', 'https://127.0.0.1/hook', '["click"]', 'whsec_test', 0, 0)`,
      );
      await client.query(
        `INSERT INTO events (id, account_id, name, body, created_at)
         SELECT 'evt_' || i, 'acct', 'click', '\\x00'::bytea, 0 FROM generate_series(1, 20000) AS i`,
      );
      await client.query(
        `INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, attempts,
                                 next_attempt_at, created_at, updated_at)
         SELECT 'dlv_' || i, 'evt_' || i, 'ep', 'acct', 'click', 'awaiting_retry', 1, 1, 0, 0
         FROM generate_series(1, 20000) AS i`,
      );
      // Analyzed before the pause: the statistics know of no held row, as after a pause of a backlog.
      await client.query('ANALYZE deliveries');
      await client.query(`UPDATE deliveries SET status = 'held'`);
      const shown = (await client.query(`EXPLAIN ${MOVES.release}`, ['ep', 1000, 1, null])).rows
        .map((r) => r['QUERY PLAN'])
        .join('\n');
      // The update's own read is by key; a read of the held rows filtered by the picked ids read
      // every held row at each step.
      expect(shown).toMatch(/Update on deliveries[\s\S]*Index Scan using deliveries_pkey on deliveries/);
      expect(shown).not.toMatch(/Filter: \(id = ANY/);
    } finally {
      client.release();
    }
  });

  it('stores one event of one key published at once through four store instances', async () => {
    const schema = freshSchema();
    const stores: SenderStore[] = Array.from({ length: 4 }, () =>
      createPostgresStore({ connectionString: PG_URL, schema, poolSize: 2 }),
    );
    try {
      await stores[0]!.migrate();
      const accountId = newId('acct');
      await stores[0]!.createEndpoint({
        id: newId('ep'),
        accountId,
        url: 'https://receiver.example.com/hook',
        events: ['click'],
        secret: 'whsec_test',
        description: null,
        now: 1,
      });
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          stores[i % 4]!.publish(
            {
              id: newId('evt'),
              accountId,
              name: 'click',
              body: Buffer.from('{}'),
              createdAt: 1_000 + i,
              idempotencyKey: 'the-one',
            },
            () => newId('dlv'),
          ),
        ),
      );
      expect(new Set(results.map((r) => r.eventId)).size).toBe(1);
      expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
      const counted = await admin.query(
        `SELECT (SELECT count(*) FROM "${schema}".events)::int AS events, (SELECT count(*) FROM "${schema}".deliveries)::int AS deliveries`,
      );
      expect(counted.rows[0]).toEqual({ events: 1, deliveries: 1 });
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });
});
