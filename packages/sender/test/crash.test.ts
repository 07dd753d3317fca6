/**
 * Crash safety (design I2, design I3): a sender process killed with SIGKILL in the middle of a
 * 5,000-event burst and restarted loses nothing: every event whose publish returned reaches the
 * receiver at least once. Duplicates are counted and reported.
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

const BURST = 5000;
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

    // The restarted process finishes the burst: indices from the first unacknowledged one.
    const second = startSenderProcess({ ...env, BURST_FROM: String(acknowledged), BURST_TO: String(BURST) });
    children.push(second);
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

    const second = startSenderProcess({ ...env, BURST_FROM: String(acknowledged), BURST_TO: String(BURST) });
    children.push(second);
    await second.printed('burst done');
    await receiver.until(() => clicksOf(route).size >= BURST);
    await second.kill('SIGTERM');
    const byClick = report(route, 'postgres');
    for (let i = 0; i < BURST; i++) expect(byClick.has(`burst-${i}`), `burst-${i}`).toBe(true);
  }, 180_000);

  it('three worker processes share one database; one SIGKILLed mid-burst loses nothing', async () => {
    const route = 'crash-pg-workers';
    const PG_SCHEMA = schema();
    const store = createPostgresStore({ connectionString: PG_URL, schema: PG_SCHEMA });
    await prepareEndpoint(store, route);
    await store.close();
    const env = { DB: PG_URL, PG_SCHEMA, ACCOUNT, CA: caFile };

    const workers = [startSenderProcess(env), startSenderProcess(env)];
    children.push(...workers);
    await Promise.all(workers.map((w) => w.printed('ready')));
    const publisher = startSenderProcess({ ...env, BURST_FROM: '0', BURST_TO: String(BURST) });
    children.push(publisher);
    await receiver.until(() => clicksOf(route).size >= 1000);
    await workers[0]!.kill('SIGKILL');
    console.log(`[crash postgres workers] one of three killed after ${clicksOf(route).size} events received`);
    await publisher.printed('burst done');
    await receiver.until(() => clicksOf(route).size >= BURST);
    await Promise.all([publisher.kill('SIGTERM'), workers[1]!.kill('SIGTERM')]);
    const byClick = report(route, 'postgres workers');
    for (let i = 0; i < BURST; i++) expect(byClick.has(`burst-${i}`), `burst-${i}`).toBe(true);
  }, 180_000);
});
