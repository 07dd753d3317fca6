/**
 * `sender.publishMany` and group commit on the real stores: each item answers on its own and in
 * order (an invalid one is a SenderError in its place, the valid ones are stored), and publishes
 * made at the same moment, which the store writes together, all land. Counted in the database
 * itself afterwards, on SQLite, and on PostgreSQL when it is up.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sampleEventData } from '@linkhooks/protocol';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../src/domain/ids.js';
import { createSender, type PublishItem, type Sender } from '../src/engine/sender.js';
import { isSenderError, SenderError } from '../src/errors.js';
import type { SenderStore } from '../src/store/port.js';
import { createPostgresStore } from '../src/store/postgres/postgres-store.js';
import type { EventRecord } from '../src/store/records.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { PG_URL, requireService } from './helpers/services.js';

const pgUp = await requireService('PostgreSQL', PG_URL);

/** A store on fresh storage, and a way to count rows in it from outside the store. */
interface Backend {
  store: SenderStore;
  count(table: 'events' | 'deliveries'): Promise<number>;
  dispose(): Promise<void>;
}

let dir: string;
let schemas = 0;
const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'linkhooks-publish-many-'));
});
afterAll(async () => {
  await admin.end();
  rmSync(dir, { recursive: true, force: true });
});

const backends: Array<[string, boolean, () => Promise<Backend>]> = [
  [
    'SQLite',
    true,
    async () => {
      const filename = join(dir, `publish-${schemas++}.db`);
      const store = createSqliteStore({ filename });
      await store.migrate();
      return {
        store,
        async count(table) {
          const db = new Database(filename, { readonly: true });
          try {
            return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
          } finally {
            db.close();
          }
        },
        dispose: () => store.close(),
      };
    },
  ],
  [
    'PostgreSQL',
    pgUp,
    async () => {
      const schema = `lh_publish_many_${process.pid}_${schemas++}`;
      const store = createPostgresStore({ connectionString: PG_URL, schema });
      await store.migrate();
      return {
        store,
        async count(table) {
          const { rows } = await admin.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM "${schema}".${table}`,
          );
          return rows[0]!.n;
        },
        async dispose() {
          await store.close();
          await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        },
      };
    },
  ],
];

const click = (clickId: string) => ({
  click_id: clickId,
  link_id: 7,
  link_slug: 'summer',
  destination_url: 'https://shop.example.com/',
  ip: '203.0.113.9',
  country: 'DE',
  region: 'Berlin',
  city: 'Berlin',
  device: 'mobile',
  browser: 'Firefox',
  os: 'Linux',
  referer: 'https://news.example.org/',
  is_unique: true,
  fraud_flags: [],
});

const A = 'acct_many_a';
const B = 'acct_many_b';

for (const [name, available, open] of backends) {
  describe.runIf(available)(`publishMany and group commit on ${name}`, () => {
    let backend: Backend;
    let sender: Sender;
    let endpoints: { a1: string; a2: string; b: string };

    beforeAll(async () => {
      backend = await open();
      // Never started: deliveries stay as they were stored.
      sender = createSender({ store: backend.store, allowPrivateNetworks: true });
      const make = async (account: string, path: string, events: ('click' | 'conversion')[]) =>
        (await sender.createEndpoint(account, { url: `https://127.0.0.1:9/hooks/${path}`, events })).id;
      endpoints = {
        a1: await make(A, 'a1', ['click']),
        a2: await make(A, 'a2', ['click', 'conversion']),
        b: await make(B, 'b', ['click']),
      };
    });
    afterAll(async () => {
      await sender?.stop(0);
      await backend?.dispose();
    });

    let before: { events: number; deliveries: number };
    const counted = async () => ({
      events: await backend.count('events'),
      deliveries: await backend.count('deliveries'),
    });
    const added = async () => {
      const now = await counted();
      return { events: now.events - before.events, deliveries: now.deliveries - before.deliveries };
    };
    afterEach(async () => {
      before = await counted();
    });
    beforeAll(async () => {
      before = await counted();
    });

    const clickIdOf = async (accountId: string, eventId: string) => {
      const event = await sender.getEvent(accountId, eventId);
      return (JSON.parse(Buffer.from(event.body).toString('utf8')) as { data: { click_id: string } }).data
        .click_id;
    };

    it('answers every item in order: invalid ones as SenderErrors in place, valid ones stored', async () => {
      const items: PublishItem[] = [
        { accountId: A, event: 'click', data: click('m-0') },
        { accountId: A, event: 'clicks', data: click('m-1') },
        { accountId: B, event: 'click', data: click('m-2') },
        { accountId: A, event: 'click', data: { ...click('m-3'), link_id: 'seven' } },
        { accountId: A, event: 'click', data: click('m-4'), timestamp: '2026-11-22T10:00:00Z' },
        { accountId: A, event: 'click', data: click('m-5'), timestamp: 'yesterday' },
        { accountId: A, event: 'click', data: null },
        { accountId: A, event: 'click', data: { ...click('m-7'), fraud_flags: [1] } },
        { accountId: 'acct_nobody_subscribes', event: 'click', data: click('m-8') },
        { accountId: B, event: 'click', data: click('m-9') },
      ];
      const results = await sender.publishMany(items);
      expect(results).toHaveLength(items.length);
      const valid = [0, 2, 4, 8, 9];
      for (const [i, r] of results.entries()) {
        expect(r.ok, `item ${i}`).toBe(valid.includes(i));
        if (!r.ok) {
          expect(r.error).toBeInstanceOf(SenderError);
          expect(isSenderError(r.error)).toBe(true);
          expect(r.error.code, `item ${i}`).toBe('invalid_event');
        }
      }
      const errorOf = (i: number) => {
        const r = results[i]!;
        if (r.ok) throw new Error(`item ${i} was published`);
        return r.error;
      };
      expect(errorOf(1).message).toMatch(/event must be one of/);
      expect(errorOf(3).message).toMatch(/link_id/);
      expect(errorOf(5).message).toMatch(/timestamp/);
      expect(errorOf(7).message).toMatch(/fraud_flags/);

      // Each valid result is its own item's event, with its account's deliveries.
      const resultOf = (i: number) => {
        const r = results[i]!;
        if (!r.ok) throw r.error;
        return r.result;
      };
      for (const i of valid) {
        expect(await clickIdOf(items[i]!.accountId, resultOf(i).eventId), `item ${i}`).toBe(`m-${i}`);
        for (const d of resultOf(i).deliveries) {
          expect(d.eventId).toBe(resultOf(i).eventId);
          expect(d.accountId).toBe(items[i]!.accountId);
          expect((await sender.getDelivery(d.accountId, d.id)).delivery.status).toBe('pending');
        }
      }
      const endpointsOf = (i: number) =>
        resultOf(i)
          .deliveries.map((d) => d.endpointId)
          .sort();
      expect(endpointsOf(0)).toEqual([endpoints.a1, endpoints.a2].sort());
      expect(endpointsOf(2)).toEqual([endpoints.b]);
      expect(endpointsOf(8)).toEqual([]);
      const stamped = await sender.getEvent(A, resultOf(4).eventId);
      expect(JSON.parse(Buffer.from(stamped.body).toString('utf8')).timestamp).toBe('2026-11-22T10:00:00Z');

      // Stored: exactly the valid items and their deliveries, nothing of the invalid ones.
      expect(await added()).toEqual({ events: 5, deliveries: 2 + 1 + 2 + 0 + 1 });
    });

    it('answers an empty list with an empty list', async () => {
      expect(await sender.publishMany([])).toEqual([]);
      expect(await added()).toEqual({ events: 0, deliveries: 0 });
    });

    it('lands every one of many publishes made at once, with publishMany calls among them', async () => {
      const singles = Array.from({ length: 400 }, (_, i) =>
        sender.publish(i % 3 === 0 ? B : A, { event: 'click', data: click(`c-${i}`) }),
      );
      const lists = Array.from({ length: 5 }, (_, j) =>
        sender.publishMany(
          Array.from({ length: 40 }, (_, i) => ({
            accountId: A,
            event: i % 10 === 9 ? 'nope' : 'conversion',
            data: { ...sampleEventData('conversion'), conversion_id: `cv-${j}-${i}` },
          })),
        ),
      );
      const published = await Promise.all(singles);
      const listed = (await Promise.all(lists)).flat();

      const conversions = listed.flatMap((r) => (r.ok ? [r.result] : []));
      // One item in ten names no event: 4 of each list of 40 answer as errors, in their place.
      expect(listed.map((r) => r.ok)).toEqual(Array.from({ length: 200 }, (_, i) => i % 10 !== 9));
      expect(conversions).toHaveLength(180);
      const all = [...published, ...conversions];
      const ids = new Set(all.map((p) => p.eventId));
      expect(ids.size).toBe(all.length);
      const deliveryIds = new Set(all.flatMap((p) => p.deliveries.map((d) => d.id)));
      const expectedDeliveries =
        published.reduce((sum, _p, i) => sum + (i % 3 === 0 ? 1 : 2), 0) + conversions.length;
      expect(deliveryIds.size).toBe(expectedDeliveries);
      expect(await added()).toEqual({ events: all.length, deliveries: expectedDeliveries });

      for (const i of [0, 1, 199, 398, 399]) {
        expect(await clickIdOf(i % 3 === 0 ? B : A, published[i]!.eventId)).toBe(`c-${i}`);
      }
      const pageA1 = await sender.listDeliveries(A, { endpointId: endpoints.a1, limit: 1000 });
      const fromSingles = new Set(published.filter((_p, i) => i % 3 !== 0).map((p) => p.eventId));
      expect(pageA1.items.filter((d) => fromSingles.has(d.eventId))).toHaveLength(fromSingles.size);
    });

    it('fails a publish the store refuses alone, not the publishes written with it', async () => {
      // A publish with no account id is refused by the database (NOT NULL); made at the same
      // moment as valid ones, it is written in the same group as them.
      const outcomes = await Promise.allSettled([
        sender.publish(A, { event: 'click', data: click('alone-0') }),
        sender.publish(undefined as unknown as string, { event: 'click', data: click('alone-1') }),
        sender.publish(B, { event: 'click', data: click('alone-2') }),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(await added()).toEqual({ events: 2, deliveries: 3 });
    });

    it('in the store, fails a write that breaks a constraint alone, not the group written with it', async () => {
      const event = (clickId: string): EventRecord => ({
        id: newId('evt'),
        accountId: A,
        name: 'click',
        body: Buffer.from(
          JSON.stringify({ event: 'click', timestamp: '2026-11-22T10:00:00Z', data: click(clickId) }),
        ),
        createdAt: Date.now(),
      });
      const first = event('dup-0');
      await backend.store.publish(first, () => newId('dlv'));
      const outcomes = await Promise.allSettled(
        [event('dup-1'), first, event('dup-2')].map((e) => backend.store.publish(e, () => newId('dlv'))),
      );
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(await added()).toEqual({ events: 3, deliveries: 6 });
    });

    it('answers an item that is not an event in its place, without throwing', async () => {
      // The malformed items come first: nothing is published before they are reached.
      const items = [
        null,
        { accountId: undefined, event: 'click', data: click('shape-1') },
        { accountId: A, event: 'click', data: click('shape-2') },
      ] as unknown as PublishItem[];
      const results = await Promise.resolve().then(() => sender.publishMany(items));
      expect(results.map((r) => r.ok)).toEqual([false, false, true]);
      for (const r of results.slice(0, 2)) if (!r.ok) expect(isSenderError(r.error)).toBe(true);
      expect(await added()).toEqual({ events: 1, deliveries: 2 });
    });
  });
}
