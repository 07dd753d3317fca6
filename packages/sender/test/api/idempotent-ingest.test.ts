/**
 * Idempotent ingest over HTTP (design D36), on SQLite and on PostgreSQL: an event_id seen before
 * answers 200 with the first event and its deliveries and stores nothing, however many repeats
 * arrive at once; a malformed event_id is a 400 that says what the form is.
 */
import { sampleEventData } from '@linkhooks/protocol';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { type Api, SERVICE_TOKEN, startApi } from '../helpers/api-service.js';
import { addEndpoint } from '../helpers/endpoints.js';
import { type HttpsReceiver, startHttpsReceiver } from '../helpers/https-receiver.js';
import { PG_URL, requireService } from '../helpers/services.js';

const pgUp = await requireService('PostgreSQL', PG_URL);
const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
const schema = `lh_ingest_${process.pid}`;

let receiver: HttpsReceiver;
let n = 0;
beforeAll(async () => {
  receiver = await startHttpsReceiver();
});
afterAll(async () => {
  await receiver.close();
  if (pgUp) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.end();
});

const click = () => ({ ...sampleEventData('click'), click_id: `clk_${n++}` });

const backends: Array<[string, boolean, () => Promise<Api>, (api: Api) => Promise<number>]> = [
  [
    'SQLite',
    true,
    () => startApi(receiver.certs),
    async (api) => {
      const db = new Database(api.dbFile, { readonly: true });
      try {
        return (db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;
      } finally {
        db.close();
      }
    },
  ],
  [
    'PostgreSQL',
    pgUp,
    async () =>
      startApi(receiver.certs, { store: createPostgresStore({ connectionString: PG_URL, schema }) }),
    async () => (await admin.query(`SELECT count(*)::int AS n FROM "${schema}".events`)).rows[0].n,
  ],
];

describe.each(backends)('idempotent ingest on %s', (_name, up, start, countEvents) => {
  let api: Api;
  beforeAll(async () => {
    if (!up) return;
    api = await start();
    for (const route of ['a', 'b'])
      await addEndpoint(api.sender, receiver, { account: api.alice.account.id, route: `${_name}-${route}` });
  });
  afterAll(async () => {
    if (up) await api.close();
  });
  const send = (body: Record<string, unknown>) =>
    api.call('POST', '/internal/v1/events', {
      key: SERVICE_TOKEN,
      body: { account_id: api.alice.account.id, event: 'click', data: click(), ...body },
    });

  it.runIf(up)('answers a repeat 200 with the first event and its deliveries, storing nothing', async () => {
    const before = await countEvents(api);
    const first = await send({ event_id: 'platform:evt-1' });
    expect(first.status).toBe(202);
    expect(first.json.deliveries).toHaveLength(2);
    const again = await send({ event_id: 'platform:evt-1' });
    expect(again.status).toBe(200);
    expect(again.json.event_id).toBe(first.json.event_id);
    expect(again.json.deliveries.map((d: { id: string }) => d.id)).toEqual(
      first.json.deliveries.map((d: { id: string }) => d.id),
    );
    expect(await countEvents(api)).toBe(before + 1);
    // Another account may use the same id for its own event.
    const bobs = await api.call('POST', '/internal/v1/events', {
      key: SERVICE_TOKEN,
      body: { account_id: api.bob.account.id, event: 'click', data: click(), event_id: 'platform:evt-1' },
    });
    expect(bobs.status).toBe(202);
    expect(bobs.json.event_id).not.toBe(first.json.event_id);
  });

  it.runIf(up)('stores one event and one set of deliveries of 20 concurrent repeats', async () => {
    const before = await countEvents(api);
    const answers = await Promise.all(Array.from({ length: 20 }, () => send({ event_id: 'burst-42' })));
    expect(answers.map((a) => a.status).sort()).toEqual([...Array(19).fill(200), 202].sort());
    const ids = new Set(answers.map((a) => a.json.event_id));
    expect(ids.size).toBe(1);
    expect(await countEvents(api)).toBe(before + 1);
    const [eventId] = [...ids];
    const logged = await api.call('GET', '/v1/deliveries?limit=100');
    expect(logged.json.data.filter((d: { event_id: string }) => d.event_id === eventId)).toHaveLength(2);
    for (const a of answers) expect(a.json.deliveries).toHaveLength(2);
  });

  it.runIf(up)('answers each repeat in a batch in its place, the first 202 and the others 200', async () => {
    const res = await api.call('POST', '/internal/v1/events/batch', {
      key: SERVICE_TOKEN,
      body: {
        events: ['batch-1', 'batch-1', 'platform:evt-1', 'batch-2'].map((event_id) => ({
          account_id: api.alice.account.id,
          event: 'click',
          data: click(),
          event_id,
        })),
      },
    });
    expect(res.status).toBe(202);
    expect(res.json.results.map((r: { status: number }) => r.status)).toEqual([202, 200, 200, 202]);
    expect(res.json.results[1].event_id).toBe(res.json.results[0].event_id);
  });

  it.runIf(up)('refuses a malformed event_id with a 400 that says its form', async () => {
    for (const event_id of ['', 'has space', 'x'.repeat(201), 'tab\tinside', 'é', 42]) {
      const res = await send({ event_id });
      expect(res.status, JSON.stringify(event_id)).toBe(400);
      expect(res.json.error.message).toMatch(/event_id/);
    }
    expect((await send({ event_id: 'x'.repeat(200) })).status).toBe(202);
  });
});
