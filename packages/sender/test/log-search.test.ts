/**
 * Searching the delivery log (design D47) on SQLite and on PostgreSQL: by our event id, the
 * platform's event id, a click_id or a conversion_id, exactly, never across accounts; and each
 * store's statement shown to reach the deliveries through indexes, never a scan of the log.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sampleEventData } from '@linkhooks/protocol';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { newId } from '../src/domain/ids.js';
import { createSender } from '../src/engine/sender.js';
import type { SenderStore } from '../src/store/port.js';
import * as pgLog from '../src/store/postgres/delivery-log.js';
import { createPostgresStore } from '../src/store/postgres/postgres-store.js';
import * as sqliteLog from '../src/store/sqlite/delivery-log.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { planAsTheStore } from './helpers/pg-plans.js';
import { pgSchemas } from './helpers/pg-schemas.js';
import { PG_URL, requireService } from './helpers/services.js';
import { withSqlitePlans } from './helpers/sqlite-plans.js';

const T0 = Date.UTC(2026, 10, 22, 12);
const dir = mkdtempSync(join(tmpdir(), 'linkhooks-search-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function searchBattery(name: string, open: () => Promise<SenderStore>) {
  it(`${name}: finds a click's deliveries and its conversions' by click_id, and nothing of another account`, async () => {
    const store = await open();
    await store.migrate();
    const sender = createSender({ store, clock: new ManualClock(T0) });
    try {
      const endpointOf = async (accountId: string) =>
        store.createEndpoint({
          id: newId('ep'),
          accountId,
          url: 'https://receiver.example.com/hook',
          events: ['click', 'conversion', 'link.created'],
          secret: 'whsec_test',
          description: null,
          now: T0,
        });
      const [alice, bob] = [newId('acct'), newId('acct')];
      await endpointOf(alice);
      await endpointOf(bob);
      const click = await sender.publish(alice, {
        event: 'click',
        data: { ...sampleEventData('click'), click_id: 'clk_shared' },
        eventId: 'platform-click-1',
      });
      const conversion = await sender.publish(alice, {
        event: 'conversion',
        data: { ...sampleEventData('conversion'), click_id: 'clk_shared', conversion_id: 'cnv_1' },
      });
      await sender.publish(alice, {
        event: 'click',
        data: { ...sampleEventData('click'), click_id: 'clk_other' },
      });
      await sender.publish(alice, { event: 'link.created', data: sampleEventData('link.created') });
      const bobs = await sender.publish(bob, {
        event: 'click',
        data: { ...sampleEventData('click'), click_id: 'clk_shared' },
        eventId: 'platform-click-1',
      });
      const found = async (accountId: string, search: string, endpointId?: string) =>
        (
          await store.listDeliveries(accountId, { search, limit: 20, ...(endpointId ? { endpointId } : {}) })
        ).items.map((d) => d.eventId);

      // Both published in one millisecond: their order in the log is the store's (on PostgreSQL a
      // delivery id keeps its event's millisecond, then the run of the statement that wrote it), so
      // compare as sets.
      expect((await found(alice, 'clk_shared')).sort()).toEqual([conversion.eventId, click.eventId].sort());
      expect(await found(alice, 'cnv_1')).toEqual([conversion.eventId]);
      expect(await found(alice, click.eventId)).toEqual([click.eventId]);
      expect(await found(alice, 'platform-click-1')).toEqual([click.eventId]);
      expect(await found(alice, 'clk_sha')).toEqual([]);
      expect(await found(bob, 'clk_shared')).toEqual([bobs.eventId]);
      expect(await found(bob, 'platform-click-1')).toEqual([bobs.eventId]);
      expect(await found(bob, click.eventId)).toEqual([]);
      expect(await found(bob, 'cnv_1')).toEqual([]);
      const alicesEndpoint = click.deliveries[0]!.endpointId;
      expect(await found(alice, 'clk_shared', alicesEndpoint)).toHaveLength(2);
      expect(await found(bob, 'clk_shared', alicesEndpoint)).toEqual([]);
      // Pages of a search follow the cursor like the whole log's.
      const first = await store.listDeliveries(alice, { search: 'clk_shared', limit: 1 });
      expect(first.nextCursor).not.toBeNull();
      const second = await store.listDeliveries(alice, {
        search: 'clk_shared',
        limit: 1,
        cursor: first.nextCursor!,
      });
      expect([...first.items, ...second.items].map((d) => d.eventId).sort()).toEqual(
        [conversion.eventId, click.eventId].sort(),
      );
    } finally {
      await store.close();
    }
  });
}

let n = 0;
searchBattery('sqlite', async () => createSqliteStore({ filename: join(dir, `search-${n++}.db`) }));

describe('sqlite', () => {
  it('fills the search columns of events published before the search migration', async () => {
    const filename = join(dir, 'upgrade.db');
    let store = createSqliteStore({ filename });
    await store.migrate();
    const sender = createSender({ store, clock: new ManualClock(T0) });
    const accountId = newId('acct');
    await store.createEndpoint({
      id: newId('ep'),
      accountId,
      url: 'https://receiver.example.com/hook',
      events: ['conversion'],
      secret: 'whsec_test',
      description: null,
      now: T0,
    });
    const published = await sender.publish(accountId, {
      event: 'conversion',
      data: { ...sampleEventData('conversion'), click_id: 'clk_old', conversion_id: 'cnv_old' },
    });
    await store.close();
    const db = new Database(filename);
    db.exec(`DROP INDEX events_by_click; DROP INDEX events_by_conversion;
             ALTER TABLE events DROP COLUMN click_id; ALTER TABLE events DROP COLUMN conversion_id;
             DELETE FROM schema_migrations WHERE version = 10`);
    db.close();
    store = createSqliteStore({ filename });
    try {
      await store.migrate();
      for (const search of ['clk_old', 'cnv_old']) {
        const page = await store.listDeliveries(accountId, { search, limit: 5 });
        expect(page.items.map((d) => d.eventId)).toEqual([published.eventId]);
      }
    } finally {
      await store.close();
    }
  });

  it('searches through the events indexes and the deliveries by event, never scanning', async () => {
    await withSqlitePlans(dir, (plan) => {
      const params = { accountId: 'a', search: 's', endpointId: 'e', cursor: 'c', limit: 2 };
      for (const filter of [{}, { endpointId: 'e' }, { cursor: 'c' }]) {
        const text = plan(sqliteLog.listSql({ search: 's', limit: 1, ...filter }), params);
        expect(text).not.toMatch(/\bSCAN\b(?! CONSTANT)/);
        expect(text).toMatch(/SEARCH deliveries USING INDEX deliveries_by_event \(event_id=\?\)/);
        expect(text).toMatch(/SEARCH events USING INDEX sqlite_autoindex_events_1 \(id=\?\)/);
        expect(text).toMatch(/SEARCH events USING (COVERING )?INDEX events_idempotency_key/);
        expect(text).toMatch(/SEARCH events USING (COVERING )?INDEX events_by_click/);
        expect(text).toMatch(/SEARCH events USING (COVERING )?INDEX events_by_conversion/);
      }
    });
  });
});

const pgUp = await requireService('PostgreSQL', PG_URL);
describe.runIf(pgUp)('postgres', () => {
  const schemas = pgSchemas('lh_search');
  const { admin } = schemas;
  afterAll(schemas.drop);

  searchBattery('postgres', async () =>
    createPostgresStore({ connectionString: PG_URL, schema: schemas.fresh(), poolSize: 2 }),
  );

  it('reads a search through indexes among 40,000 events and deliveries (EXPLAIN ANALYZE)', async () => {
    const schema = await schemas.migrated();
    const client = await admin.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SET LOCAL search_path = "${schema}"`);
      await planAsTheStore(client, true);
      await client.query(`
        INSERT INTO endpoints (id, account_id, url, events, secret, created_at, updated_at)
        VALUES ('ep', 'acct', 'https://r.example.com/', '["click"]', 'whsec_x', 0, 0)`);
      // One click a second, each its own click_id, for two accounts; every tenth a conversion.
      await client.query(`
        INSERT INTO events (id, account_id, name, body, created_at, idempotency_key, click_id, conversion_id)
        SELECT 'evt_' || a || lpad(g::text, 7, '0'), a, 'click', '\\x7b7d', g::bigint * 1000, 'p_' || g,
               'clk_' || g, CASE WHEN g % 10 = 0 THEN 'cnv_' || g END
        FROM generate_series(1, 20000) g, unnest(ARRAY['acct', 'other']) a`);
      await client.query(`
        INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, created_at, updated_at)
        SELECT 'dlv_' || substr(id, 5), id, 'ep', account_id, 'click', 'delivered', created_at, created_at
        FROM events`);
      for (const table of ['events', 'deliveries']) await client.query(`ANALYZE ${table}`);
      for (const [search, rows] of [
        ['clk_4242', 1],
        ['cnv_4240', 1],
        ['p_77', 1],
        ['evt_acct0012345', 1],
        ['nothing', 0],
      ] as const) {
        const { text, values } = pgLog.listQuery('acct', { search, limit: 20 });
        const [row] = (await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values)).rows;
        const plan = JSON.stringify(row['QUERY PLAN']);
        expect(plan).not.toMatch(/Seq Scan/);
        // Our id is found by the primary key or the account's index, whichever the planner picks.
        expect(plan).toMatch(/"Index Name":"events_(pkey|by_account)","Relation Name":"events"/);
        for (const index of ['events_idempotency_key', 'events_by_click', 'events_by_conversion'])
          expect(plan).toContain(`"Index Name":"${index}"`);
        expect(plan).toMatch(/"Index Name":"deliveries_by_event"/);
        expect((await client.query(text, values)).rows).toHaveLength(rows);
      }
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });
});
