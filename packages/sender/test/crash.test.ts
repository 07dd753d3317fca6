/**
 * Crash safety (design I2, design I3): a sender process killed with SIGKILL in the middle of a
 * 3,000-event burst and restarted loses nothing: every event whose publish returned reaches the
 * receiver at least once, and those it had acknowledged but not delivered (in flight or queued)
 * arrive within 15 s of the restart; the deliveries a killed worker held while another worker
 * runs are delivered by that one within 15 s of the kill: a dead worker's leases lapse within one
 * lease, 10 s by default, since live workers renew theirs. Duplicates are counted and reported.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSender } from '../src/engine/sender.js';
import type { SenderStore } from '../src/store/port.js';
import { createPostgresStore } from '../src/store/postgres/postgres-store.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { addEndpoint } from './helpers/endpoints.js';
import { type HttpsReceiver, startHttpsReceiver } from './helpers/https-receiver.js';
import { type SenderProcess, startSenderProcess } from './helpers/sender-process.js';
import { PG_URL, requireService } from './helpers/services.js';

const BURST = 3000;
const RECOVERY_MS = 15_000;
const ACCOUNT = 'acct_crash';

let receiver: HttpsReceiver;
let dir: string;
let caFile: string;
const children: SenderProcess[] = [];

beforeAll(async () => {
  receiver = await startHttpsReceiver();
  dir = mkdtempSync(join(tmpdir(), 'linkhooks-crash-'));
  caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, receiver.certs.ca);
});
afterAll(async () => {
  await Promise.all(children.map((c) => c.kill('SIGKILL')));
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Creates the endpoint through the engine, so its URL passes the same checks as in production. */
async function prepareEndpoint(store: SenderStore, route: string) {
  await store.migrate();
  const sender = createSender({ store, allowPrivateNetworks: true, ca: receiver.certs.ca });
  await addEndpoint(sender, receiver, { account: ACCOUNT, route });
  await sender.stop(0);
}

/** The clicks of the deliveries leased right now, whichever process holds them. */
async function leasedClicks(pgSchema: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ click_id: string }>(
      `SELECT convert_from(ev.body, 'UTF8')::jsonb -> 'data' ->> 'click_id' AS click_id
       FROM "${pgSchema}".leases l
       JOIN "${pgSchema}".deliveries d ON d.id = l.delivery_id
       JOIN "${pgSchema}".events ev ON ev.id = d.event_id`,
    );
    return rows.map((r) => r.click_id);
  } finally {
    await client.end();
  }
}

function report(route: string, label: string) {
  const mine = receiver.received.filter((r) => r.route === route);
  const byClick = new Map<string, number>();
  for (const r of mine) {
    const id = (r.event.data as { click_id: string }).click_id;
    byClick.set(id, (byClick.get(id) ?? 0) + 1);
  }
  const duplicates = mine.length - byClick.size;
  console.log(
    `[crash ${label}] ${mine.length} deliveries received, ${byClick.size} distinct events, ${duplicates} duplicates`,
  );
  return byClick;
}

describe('a sender killed with SIGKILL mid-burst and restarted', () => {
  it('loses nothing on SQLite', async () => {
    const route = 'crash-sqlite';
    const db = join(dir, 'crash.db');
    await prepareEndpoint(createSqliteStore({ filename: db }), route);
    const env = { DB: `sqlite:${db}`, ACCOUNT, CA: caFile };
    const mine = () => receiver.received.filter((r) => r.route === route);

    const first = startSenderProcess({ ...env, BURST_FROM: '0', BURST_TO: String(BURST) });
    children.push(first);
    // Killed mid-burst: while it is still publishing, with deliveries in flight.
    await first.publishedAtLeast(1500);
    await first.kill('SIGKILL');
    const acknowledged = first.published.size;
    expect(acknowledged).toBeLessThan(BURST);
    console.log(
      `[crash sqlite] killed after ${acknowledged} publishes, ${mine().length} deliveries received`,
    );
    const received = () => new Set(mine().map((r) => (r.event.data as { click_id: string }).click_id));
    const owed = [...first.published].map((i) => `burst-${i}`).filter((id) => !received().has(id));

    // The restarted process finishes the burst: indices from the first unacknowledged one.
    const second = startSenderProcess({ ...env, BURST_FROM: String(acknowledged), BURST_TO: String(BURST) });
    children.push(second);
    const restarted = performance.now();
    await receiver.until(() => owed.every((id) => received().has(id)), 60_000);
    const recoveredMs = performance.now() - restarted;
    console.log(
      `[crash sqlite] ${owed.length} owed deliveries arrived ${Math.round(recoveredMs)} ms after the restart`,
    );
    expect(recoveredMs).toBeLessThanOrEqual(RECOVERY_MS);
    await second.printed('burst done');
    await receiver.until(
      () => new Set(mine().map((r) => (r.event.data as { click_id: string }).click_id)).size >= BURST,
    );
    await second.kill('SIGTERM');

    const byClick = report(route, 'sqlite');
    for (let i = 0; i < BURST; i++) expect(byClick.has(`burst-${i}`), `burst-${i}`).toBe(true);
  }, 180_000);
});

const pgUp = await requireService('PostgreSQL', PG_URL);

describe.runIf(pgUp)('on PostgreSQL', () => {
  const schemas: string[] = [];
  const schema = () => {
    const name = `lh_crash_${process.pid}_${schemas.length}`;
    schemas.push(name);
    return name;
  };
  afterAll(async () => {
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    for (const name of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
    await admin.end();
  });
  const hitsOf = (route: string) => receiver.hits.filter((h) => h.route === route).length;
  const clicksOf = (route: string) =>
    new Set(
      receiver.received
        .filter((r) => r.route === route)
        .map((r) => (r.event.data as { click_id: string }).click_id),
    );

  it('a sender killed with SIGKILL mid-burst and restarted loses nothing', async () => {
    const route = 'crash-pg';
    const PG_SCHEMA = schema();
    const store = createPostgresStore({ connectionString: PG_URL, schema: PG_SCHEMA });
    await prepareEndpoint(store, route);
    await store.close();
    const env = { DB: PG_URL, PG_SCHEMA, ACCOUNT, CA: caFile };

    const first = startSenderProcess({ ...env, BURST_FROM: '0', BURST_TO: String(BURST) });
    children.push(first);
    await first.publishedAtLeast(1500);
    await first.kill('SIGKILL');
    const acknowledged = first.published.size;
    expect(acknowledged).toBeLessThan(BURST);
    console.log(
      `[crash postgres] killed after ${acknowledged} publishes, ${clicksOf(route).size} events received`,
    );
    const owed = [...first.published].map((i) => `burst-${i}`).filter((id) => !clicksOf(route).has(id));

    const second = startSenderProcess({ ...env, BURST_FROM: String(acknowledged), BURST_TO: String(BURST) });
    children.push(second);
    const restarted = performance.now();
    await receiver.until(() => owed.every((id) => clicksOf(route).has(id)), 60_000);
    const recoveredMs = performance.now() - restarted;
    console.log(
      `[crash postgres] ${owed.length} owed deliveries arrived ${Math.round(recoveredMs)} ms after the restart`,
    );
    expect(recoveredMs).toBeLessThanOrEqual(RECOVERY_MS);
    await second.printed('burst done');
    await receiver.until(() => clicksOf(route).size >= BURST);
    await second.kill('SIGTERM');
    const byClick = report(route, 'postgres');
    for (let i = 0; i < BURST; i++) expect(byClick.has(`burst-${i}`), `burst-${i}`).toBe(true);
  }, 180_000);

  it('a worker SIGKILLed holding leases: another worker takes them over within 15 s and nothing is lost', async () => {
    const route = 'crash-pg-workers';
    const PG_SCHEMA = schema();
    const store = createPostgresStore({ connectionString: PG_URL, schema: PG_SCHEMA });
    await prepareEndpoint(store, route);
    await store.close();
    const env = { DB: PG_URL, PG_SCHEMA, ACCOUNT, CA: caFile };

    // The publisher only publishes; the first worker delivers alone until it is killed holding
    // every slot of the endpoint (its cap, 8, across workers), its requests parked by the receiver.
    // The second worker, started meanwhile, can claim nothing of that endpoint until the dead
    // worker's leases lapse: that is what is timed.
    const first = startSenderProcess(env);
    children.push(first);
    await first.printed('ready');
    const publisher = startSenderProcess({ ...env, WORKERS: '0', BURST_FROM: '0', BURST_TO: String(BURST) });
    children.push(publisher);
    await receiver.until(() => clicksOf(route).size >= 1000);
    const hitsBefore = hitsOf(route);
    receiver.behave(route, 'hold');
    await receiver.until(() => hitsOf(route) - hitsBefore >= 8);
    const survivor = startSenderProcess(env);
    children.push(survivor);
    await survivor.printed('ready');
    await first.kill('SIGKILL');
    const killed = performance.now();
    const held = await leasedClicks(PG_SCHEMA);
    receiver.behave(route, 'ok');
    console.log(
      `[crash postgres workers] killed holding ${held.length} leases, ${clicksOf(route).size} events received`,
    );
    expect(held.length).toBe(8);
    // Parked before its handler ran, and the client is gone: none of them has been received, so
    // each one that arrives now was sent by the survivor after taking the lease over.
    expect(held.filter((id) => clicksOf(route).has(id))).toEqual([]);
    await receiver.until(() => held.every((id) => clicksOf(route).has(id)), 60_000);
    const recoveredMs = performance.now() - killed;
    console.log(
      `[crash postgres workers] ${held.length} deliveries in flight at the kill delivered ${Math.round(recoveredMs)} ms after it`,
    );
    expect(recoveredMs).toBeLessThanOrEqual(RECOVERY_MS);
    await publisher.printed('burst done');
    await receiver.until(() => clicksOf(route).size >= BURST);
    await Promise.all([publisher.kill('SIGTERM'), survivor.kill('SIGTERM')]);
    const byClick = report(route, 'postgres workers');
    for (let i = 0; i < BURST; i++) expect(byClick.has(`burst-${i}`), `burst-${i}`).toBe(true);
  }, 180_000);
});
