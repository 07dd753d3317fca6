/**
 * Group commit is durable (design I2): `linkhooks-sender serve` takes many concurrent single
 * ingests and some batch ingests, written together in groups (its own counts in `/metrics`, read
 * just before the kill, show at most three commits for four single ingests answered), and is
 * killed with SIGKILL while they are still arriving. Every event it answered 202 for, and every delivery that answer named,
 * is in the database when a fresh store opens it — on SQLite and on PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SenderStore } from '../src/store/port.js';
import { createPostgresStore } from '../src/store/postgres/postgres-store.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { type CliService, runCli, startCli } from './helpers/cli-process.js';
import { PG_URL, requireService } from './helpers/services.js';

const MASTER_KEY = randomBytes(32).toString('base64');

const TOKEN = 'svc_group_commit_token_0123456789';
/** Concurrent clients, each sending one request after another. */
const CLIENTS = 48;
const REQUESTS_PER_CLIENT = 80;
const BATCH_SIZE = 100;
/** The item of each batch that is invalid: it answers 400 in its place. */
const INVALID_IN_BATCH = 37;
/** SIGKILL as soon as this many events were answered 202: the others are still on their way. */
const KILL_AFTER = 1500;

/** Clients 0..5 send a batch as their 3rd request, clients 6..11 as their 30th: near the kill. */
const isBatch = (client: number, request: number) =>
  (client < 6 && request === 2) || (client >= 6 && client < 12 && request === 29);
const PLANNED_EVENTS = CLIENTS * REQUESTS_PER_CLIENT - 12 + 12 * (BATCH_SIZE - 1);

let dir: string;
const services: CliService[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'linkhooks-group-commit-'));
});
afterAll(async () => {
  for (const service of services) if (service.child.exitCode === null) service.child.kill('SIGKILL');
  await Promise.all(services.map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
});

const click = (clickId: string) => ({
  click_id: clickId,
  link_id: 3,
  link_slug: 'durable',
  destination_url: 'https://shop.example.com/',
  ip: '203.0.113.5',
  country: 'NL',
  region: 'NH',
  city: 'Amsterdam',
  device: 'desktop',
  browser: 'Firefox',
  os: 'Linux',
  referer: '',
  is_unique: true,
  fraud_flags: [],
});

interface Acknowledged {
  eventId: string;
  deliveryIds: string[];
}

/** `accounts create` and two endpoints subscribed to clicks, then `serve` on a free port. */
async function startService(db: string) {
  // PostgreSQL needs a master key; a SQLite service makes its own beside the database.
  const env = {
    LINKHOOKS_SERVICE_TOKEN: TOKEN,
    LINKHOOKS_LOG_LEVEL: 'info',
    LINKHOOKS_MASTER_KEY: MASTER_KEY,
  };
  const created = await runCli(
    ['accounts', 'create', '--name', 'Durable', '--plan', 'business', '--json', '--db', db],
    env,
  );
  expect(created.code, created.stderr).toBe(0);
  const account = JSON.parse(created.stdout) as { id: string; api_key: string };
  const service = startCli(['serve', '--db', db, '--port', '0', '--allow-private-networks'], env);
  services.push(service);
  const base = (await service.logged((l) => typeof l.url === 'string', 'listening')).url as string;
  // Nothing listens on port 9: attempts fail and are retried minutes later; the deliveries stay.
  for (const name of ['a', 'b']) {
    const res = await fetch(`${base}/v1/endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.api_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `https://127.0.0.1:9/hooks/${name}`, events: ['click'] }),
    });
    expect(res.status).toBe(201);
  }
  return { service, base, accountId: account.id };
}

/**
 * Sends single and batch ingests from CLIENTS concurrent clients; once KILL_AFTER events were
 * answered 202, scrapes `/metrics` and kills the service with SIGKILL as the scrape is answered,
 * going on recording every 202 that still arrives (answers already on the wire). Resolves once
 * every client has stopped.
 */
async function ingestUntilKilled(service: CliService, base: string, accountId: string) {
  const acknowledged: Acknowledged[] = [];
  const unexpected: string[] = [];
  let batchesAnswered = 0;
  let killed = false;
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    service.child.once('exit', (_code, signal) => resolve(signal)),
  );

  let singlesAnswered = 0;
  let scraped: Promise<{ singlesBefore: number; text: string; error?: string }> | undefined;
  const record = (result: { event_id: string; deliveries: { id: string }[] }, single: boolean) => {
    acknowledged.push({ eventId: result.event_id, deliveryIds: result.deliveries.map((d) => d.id) });
    if (single) singlesAnswered++;
    if (!scraped && acknowledged.length >= KILL_AFTER) {
      // The service's own counts of what it stored and in how many commits, then the kill: the
      // clients go on sending meanwhile.
      const singlesBefore = singlesAnswered;
      scraped = fetch(`${base}/metrics`)
        .then(async (res) => ({
          singlesBefore,
          text: await res.text(),
          ...(res.ok ? {} : { error: `answered ${res.status}` }),
        }))
        .catch((error: Error) => ({ singlesBefore, text: '', error: error.message }))
        .finally(() => {
          killed = true;
          service.child.kill('SIGKILL');
        });
    }
  };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(base + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: await res.json() };
  };

  async function client(c: number) {
    for (let r = 0; r < REQUESTS_PER_CLIENT; r++) {
      try {
        if (isBatch(c, r)) {
          const events = Array.from({ length: BATCH_SIZE }, (_, i) => ({
            account_id: accountId,
            event: 'click',
            data: i === INVALID_IN_BATCH ? { ...click(`b${c}-${i}`), link_id: 'three' } : click(`b${c}-${i}`),
          }));
          const res = await post('/internal/v1/events/batch', { events });
          if (res.status !== 202) {
            unexpected.push(`batch ${c}: ${res.status} ${JSON.stringify(res.json)}`);
            continue;
          }
          batchesAnswered++;
          for (const [i, result] of (res.json.results as { status: number }[]).entries()) {
            if (result.status === 202) record(res.json.results[i], false);
            else if (i !== INVALID_IN_BATCH) unexpected.push(`batch ${c} item ${i}: ${result.status}`);
          }
        } else {
          const res = await post('/internal/v1/events', {
            account_id: accountId,
            event: 'click',
            data: click(`s${c}-${r}`),
          });
          if (res.status === 202) record(res.json, true);
          else unexpected.push(`single ${c}/${r}: ${res.status} ${JSON.stringify(res.json)}`);
        }
      } catch (error) {
        // Once the service is killed, requests on their way fail; before that, a failure is a bug.
        if (!killed) unexpected.push(`client ${c} request ${r}: ${(error as Error).message}`);
        return;
      }
    }
  }

  await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
  if (!killed) service.child.kill('SIGKILL');
  return { acknowledged, unexpected, batchesAnswered, scraped: await scraped, signal: await exited };
}

/** The acknowledged events, and the deliveries their answers named, that the store does not have. */
async function missingFrom(store: SenderStore, accountId: string, acknowledged: Acknowledged[]) {
  const events: string[] = [];
  const deliveries: string[] = [];
  for (let i = 0; i < acknowledged.length; i += 100) {
    await Promise.all(
      acknowledged.slice(i, i + 100).map(async ({ eventId, deliveryIds }) => {
        const event = await store.getEvent(accountId, eventId);
        if (!event) events.push(eventId);
        for (const id of deliveryIds) {
          const found = await store.getDelivery(accountId, id);
          if (found?.delivery.eventId !== eventId) deliveries.push(id);
        }
      }),
    );
  }
  return { events, deliveries };
}

async function killMidIngestAndCheck(db: string, reopen: () => SenderStore, label: string) {
  const { service, base, accountId } = await startService(db);
  const run = await ingestUntilKilled(service, base, accountId);
  expect(run.unexpected).toEqual([]);
  expect(run.signal).toBe('SIGKILL');
  // Killed mid-stream, with batch ingests among what was answered.
  expect(run.acknowledged.length).toBeGreaterThanOrEqual(KILL_AFTER);
  expect(run.acknowledged.length).toBeLessThan(PLANNED_EVENTS);
  expect(run.batchesAnswered).toBeGreaterThanOrEqual(1);
  const ids = new Set(run.acknowledged.map((a) => a.eventId));
  expect(ids.size).toBe(run.acknowledged.length);
  for (const a of run.acknowledged) expect(a.deliveryIds).toHaveLength(2);
  // Grouped: every single ingest answered before the scrape was stored before it, so with a commit
  // each there would be at least as many commits as those; the batches' events add few. Three
  // quarters is far from what is seen (a commit for 3 to 10 single ingests, printed below): 48
  // clients wait on each commit's sync of the disk, or PostgreSQL's commit, while the next gathers.
  expect(run.scraped?.error, 'the scrape of /metrics before the kill').toBeUndefined();
  const counted = (name: string) => {
    const line = run.scraped?.text.split('\n').find((l) => l.startsWith(`${name} `));
    expect(line, `${name} in /metrics`).toBeDefined();
    return Number(line!.split(' ')[1]);
  };
  const stored = counted('linkhooks_events_published_total{outcome="stored"}');
  const commits = counted('linkhooks_publish_commits_total');
  const singles = run.scraped!.singlesBefore;
  expect(stored).toBeGreaterThanOrEqual(KILL_AFTER);
  expect(commits).toBeGreaterThan(0);
  expect(commits * 4, `${commits} commits for ${singles} single ingests`).toBeLessThanOrEqual(singles * 3);
  console.log(
    `[group commit ${label}] killed after ${run.acknowledged.length} events answered 202 (${run.batchesAnswered} batches); before, ${stored} stored (${singles} single ingests answered) in ${commits} commits`,
  );

  const store = reopen();
  try {
    const missing = await missingFrom(store, accountId, run.acknowledged);
    expect(missing.events, 'acknowledged events missing after the kill').toEqual([]);
    expect(missing.deliveries, 'acknowledged deliveries missing after the kill').toEqual([]);
  } finally {
    await store.close();
  }
}

describe('serve killed with SIGKILL mid-ingest', () => {
  it('keeps every event it answered 202 for, and its deliveries, on SQLite', async () => {
    const file = join(dir, 'group-commit.db');
    await killMidIngestAndCheck(`sqlite:${file}`, () => createSqliteStore({ filename: file }), 'sqlite');
  }, 180_000);
});

const pgUp = await requireService('PostgreSQL', PG_URL);

describe.runIf(pgUp)('serve killed with SIGKILL mid-ingest, on PostgreSQL', () => {
  const schema = `lh_group_commit_${randomBytes(4).toString('hex')}`;
  afterAll(async () => {
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  });

  it('keeps every event it answered 202 for, and its deliveries', async () => {
    await killMidIngestAndCheck(
      `${PG_URL}?schema=${schema}`,
      () => createPostgresStore({ connectionString: PG_URL, schema }),
      'postgres',
    );
  }, 180_000);
});
