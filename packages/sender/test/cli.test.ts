/**
 * `linkhooks-sender` run as a new user would: migrate, create an account, serve, create an
 * endpoint over HTTP, publish through the ingest route, read the delivery in the log — on SQLite,
 * and on PostgreSQL with one `serve` and one `worker` process sharing the work; and the service on
 * PostgreSQL run by Node.js 22 and 24 (the registry's builds), as platforms run it. Their SQLite
 * runs are the platform page's test (docs), which builds the SQLite driver for each.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NODE_RUNTIMES, requireRuntime, runtimeVersion } from '@linkhooks/runtimes';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maskDb } from '../src/cli/open-store.js';
import { type CliService, runCli, startCli } from './helpers/cli-process.js';
import { type HttpsReceiver, startHttpsReceiver } from './helpers/https-receiver.js';
import { pgSchemas } from './helpers/pg-schemas.js';
import { PG_URL, requireService } from './helpers/services.js';

const TOKEN = 'svc_cli_token_abcdefghijklmnop';
const METRICS_TOKEN = 'metrics_cli_token_abcdefghijklmnop';
const MASTER_KEY = randomBytes(32).toString('base64');
let dir: string;
let receiver: HttpsReceiver;
let env: Record<string, string>;
const services: CliService[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'linkhooks-cli-'));
  receiver = await startHttpsReceiver();
  writeFileSync(join(dir, 'ca.pem'), receiver.certs.ca);
  env = {
    LINKHOOKS_SERVICE_TOKEN: TOKEN,
    LINKHOOKS_MASTER_KEY: MASTER_KEY,
    NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem'),
    LINKHOOKS_LOG_LEVEL: 'info',
  };
});
afterAll(async () => {
  await Promise.all(services.map((s) => s.stop()));
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

function serve(args: string[], node?: string, extra: Record<string, string> = {}) {
  const service = startCli(args, { ...env, ...extra }, node);
  services.push(service);
  return service;
}

async function listening(service: CliService): Promise<string> {
  const line = await service.logged((l) => typeof l.url === 'string', 'listening');
  return line.url as string;
}

async function http(base: string, method: string, path: string, key: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: await res.json() };
}

const click = (i: number) => ({
  click_id: `clk_cli_${i}`,
  link_id: 1,
  link_slug: 'cli',
  destination_url: 'https://shop.example.com/',
  ip: '203.0.113.1',
  country: 'FR',
  region: 'IDF',
  city: 'Paris',
  device: 'desktop',
  browser: 'Firefox',
  os: 'Linux',
  referer: 'https://news.example.org/',
  is_unique: false,
  fraud_flags: [],
});

describe('linkhooks-sender on SQLite', () => {
  it('migrates, creates an account, serves, delivers an ingested event and logs it', async () => {
    const db = `sqlite:${join(dir, 'cli.db')}`;
    const migrated = await runCli(['migrate', '--db', db]);
    expect(migrated.code).toBe(0);
    expect(migrated.stdout).toMatch(/Migrated/);

    const created = await runCli([
      'accounts',
      'create',
      '--name',
      'Acme',
      '--plan',
      'business',
      '--json',
      '--db',
      db,
    ]);
    expect(created.code).toBe(0);
    const account = JSON.parse(created.stdout) as { id: string; api_key: string };
    expect(account.api_key).toMatch(/^lhk_/);
    const human = await runCli(['accounts', 'create', '--name', 'Beta', '--plan', 'enterprise', '--db', db]);
    expect(human.stdout).toMatch(/shown once/);
    // It says which database it wrote to: a forgotten --db is seen at once.
    expect(human.stdout).toMatch(
      new RegExp(`^Created account acct_\\w+ \\(Beta, plan enterprise\\) in ${db}\\.\n`),
    );

    const service = serve(
      ['serve', '--db', db, '--port', '0', '--allow-private-networks', '--time-scale', '0.0001'],
      undefined,
      { LINKHOOKS_PER_ACCOUNT_CAP: '40' },
    );
    const base = await listening(service);
    const started = await service.logged((l) => typeof l.url === 'string', 'listening');
    // On SQLite the requests go out from a thread of their own (design D59).
    expect(started.deliveryThread).toBe(true);
    expect(started.database).toBe(db);
    // The worker's slots: the one set, the defaults for the others.
    expect(started.slots).toEqual({
      concurrency: 64,
      perEndpointCap: 8,
      perAccountCap: 40,
      perOriginCap: 56,
      perAccountAtOriginCap: 48,
    });

    const endpoint = await http(base, 'POST', '/v1/endpoints', account.api_key, {
      url: `${receiver.origin}/hooks/cli`,
      events: ['click'],
    });
    expect(endpoint.status).toBe(201);
    receiver.route('cli', endpoint.json.secret);

    const ingest = await http(base, 'POST', '/internal/v1/events', TOKEN, {
      account_id: account.id,
      event: 'click',
      data: click(1),
    });
    expect(ingest.status).toBe(202);
    const deliveryId = ingest.json.deliveries[0].id as string;
    await service.logged(
      (l) => l.msg === 'attempt' && l.delivery === deliveryId && l.next === 'delivered',
      'delivery',
    );
    expect(receiver.received.find((r) => r.route === 'cli')?.event.data).toMatchObject({
      click_id: 'clk_cli_1',
    });

    const log = await http(base, 'GET', `/v1/endpoints/${endpoint.json.id}/deliveries`, account.api_key);
    expect(log.json.data[0]).toMatchObject({ id: deliveryId, status: 'delivered', attempts: 1 });

    // The secret is encrypted at rest (LINKHOOKS_MASTER_KEY), and never in the logs.
    const raw = new Database(join(dir, 'cli.db'), { readonly: true });
    const row = raw.prepare('SELECT secret FROM endpoints WHERE id = ?').get(endpoint.json.id) as {
      secret: string;
    };
    raw.close();
    expect(row.secret).toMatch(/^lhenc:v2:[0-9a-f]{8}:/);
    expect(service.output()).not.toContain(endpoint.json.secret);
    expect(service.output()).not.toContain(account.api_key);

    // --time-scale 0.0001: a failing endpoint's retries come within milliseconds.
    receiver.behave('cli', 'status500');
    await http(base, 'POST', '/internal/v1/events', TOKEN, {
      account_id: account.id,
      event: 'click',
      data: click(2),
    });
    await receiver.until(() => receiver.hits.filter((h) => h.route === 'cli').length >= 4, 20_000);
    receiver.behave('cli', 'ok');

    expect(await service.stop()).toBe(0);
    expect(service.logs.some((l) => l.msg === 'stopped')).toBe(true);
  });

  it('fails clearly on bad flags, an unknown command and an unreachable database', async () => {
    const badPort = await runCli(['serve', '--port', 'eighty']);
    expect(badPort.code).toBe(2);
    expect(badPort.stderr).toMatch(/--port must be a whole number/);
    const unknownFlag = await runCli(['migrate', '--dbb', 'x']);
    expect(unknownFlag.code).toBe(2);
    expect(unknownFlag.stderr).toMatch(/--dbb/);
    const unknown = await runCli(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command "frobnicate"/);
    // The message and where the usage is, not the whole usage above or below it.
    for (const refused of [badPort, unknownFlag, unknown]) {
      expect(refused.stderr).toMatch(/\nRun linkhooks-sender --help for every command and option\.\n$/);
      expect(refused.stderr.split('\n')).toHaveLength(3);
    }
    const badDb = await runCli(['migrate', '--db', 'mysql://x']);
    expect(badDb.code).toBe(2);
    const badLevel = await runCli(['serve', '--db', `sqlite:${join(dir, 'level.db')}`, '--port', '0'], {
      LINKHOOKS_LOG_LEVEL: 'chatty',
    });
    expect([badLevel.code, badLevel.stderr]).toEqual([
      1,
      'linkhooks-sender: LINKHOOKS_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent\n',
    ]);
    const badSlots = await runCli(['serve', '--db', `sqlite:${join(dir, 'slots.db')}`, '--port', '0'], {
      LINKHOOKS_CONCURRENCY: 'lots',
    });
    expect(badSlots.code).toBe(1);
    expect(badSlots.stderr).toMatch(/LINKHOOKS_CONCURRENCY must be a whole number above 0/);
    const plan = await runCli([
      'accounts',
      'create',
      '--name',
      'X',
      '--plan',
      'gold',
      '--db',
      `sqlite:${join(dir, 'p.db')}`,
    ]);
    // Refused as the command line is read, naming the flag: a usage error.
    expect(plan.code).toBe(2);
    expect(plan.stderr).toMatch(/--plan must be one of free, pro, business, enterprise/);
    const down = await runCli(['migrate', '--db', 'postgres://postgres:hunter2@127.0.0.1:1/test']);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(
      /cannot reach the database postgres:\/\/postgres:\*\*\*\*@127\.0\.0\.1:1\/test/,
    );
    expect(down.stderr).not.toContain('hunter2');
    const badKey = await runCli(['serve', '--db', `sqlite:${join(dir, 'k.db')}`, '--port', '0'], {
      LINKHOOKS_MASTER_KEY: 'too-short',
    });
    expect(badKey.code).toBe(1);
    expect(badKey.stderr).toMatch(/LINKHOOKS_MASTER_KEY|32 bytes/);
    expect(badKey.stderr).not.toContain('too-short');
    const blocker = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => blocker.once('listening', resolve));
    const taken = (blocker.address() as AddressInfo).port;
    const inUse = await runCli(
      ['serve', '--db', `${PG_URL}?schema=cli_port_${taken}`, '--port', String(taken)],
      { LINKHOOKS_MASTER_KEY: MASTER_KEY },
    );
    blocker.close();
    await dropSchema(`cli_port_${taken}`);
    expect(inUse.code).toBe(1);
    expect(inUse.stderr).toBe(
      `linkhooks-sender: cannot listen: port ${taken} on 127.0.0.1 is in use by another program: stop it, or give --port (LINKHOOKS_PORT) another port\n`,
    );
    // Nothing else runs into the store it closed: the refusal is the only error.
    expect(inUse.stdout).not.toMatch(/"level":50/);
    const badHost = await runCli(
      [
        'serve',
        '--db',
        `${PG_URL}?schema=cli_port_${taken}`,
        '--port',
        '0',
        '--host',
        'no-such-host.invalid',
      ],
      { LINKHOOKS_MASTER_KEY: MASTER_KEY },
    );
    await dropSchema(`cli_port_${taken}`);
    expect(badHost.code).toBe(1);
    expect(badHost.stderr).toMatch(
      /^linkhooks-sender: cannot listen: .*(ENOTFOUND|EAI_AGAIN) no-such-host\.invalid\n$/,
    );
    expect(badHost.stdout).not.toMatch(/"level":50/);
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/linkhooks-sender serve/);
  });
});

/** Ingests clicks `first` … `first + count - 1` for the account, one request each; each answers 202. */
async function ingestClicks(base: string, accountId: string, first: number, count: number) {
  for (let i = first; i < first + count; i++) {
    const res = await http(base, 'POST', '/internal/v1/events', TOKEN, {
      account_id: accountId,
      event: 'click',
      data: click(i),
    });
    expect(res.status).toBe(202);
  }
}

/**
 * A suite's own PostgreSQL schema as a `--db`, dropped after the suite. `up` is false where the
 * suite does not run (`wanted` false) or PostgreSQL is not running.
 */
async function pgDatabase(label: string, wanted = true) {
  const up = wanted && (await requireService('PostgreSQL', PG_URL));
  const schemas = pgSchemas(label);
  afterAll(() => (up ? schemas.drop() : schemas.admin.end()));
  return { up, db: `${PG_URL}?schema=${schemas.fresh()}` };
}

/** `migrate`, then `accounts create` on `plan`, with the CLI run by `node`: the new account. */
async function migratedAccount(db: string, name: string, plan: string, node?: string) {
  expect((await runCli(['migrate', '--db', db], env, node)).code).toBe(0);
  const created = await runCli(
    ['accounts', 'create', '--name', name, '--plan', plan, '--json', '--db', db],
    env,
    node,
  );
  return JSON.parse(created.stdout) as { id: string; api_key: string };
}

/** An endpoint for each route, whose receiver keeps only deliveries signed with that endpoint's secret. */
async function subscribe(base: string, apiKey: string, routes: string[]) {
  for (const route of routes) {
    const ep = await http(base, 'POST', '/v1/endpoints', apiKey, {
      url: `${receiver.origin}/hooks/${route}`,
      events: ['click'],
    });
    expect(ep.status).toBe(201);
    receiver.route(route, ep.json.secret);
  }
}

describe('linkhooks-sender on PostgreSQL', async () => {
  const { up, db } = await pgDatabase('cli');

  it.runIf(up)('shares the work between one serve and one worker process', async () => {
    const account = await migratedAccount(db, 'PgCo', 'enterprise');
    const server = serve(['serve', '--db', db, '--port', '0', '--allow-private-networks']);
    const worker = serve(['worker', '--db', db, '--allow-private-networks', '--port', '0'], undefined, {
      LINKHOOKS_METRICS_TOKEN: METRICS_TOKEN,
    });
    const base = await listening(server);
    const started = await worker.logged((l) => /worker delivering/.test(l.msg), 'worker start');
    // On PostgreSQL the requests stay on the event loop (design D59).
    expect(started.deliveryThread).toBe(false);
    expect(started.database).toBe(maskDb(db));
    // Given a port, the worker answers its health and its own metrics there, and nothing else.
    const workerBase = started.url as string;
    expect(started.metrics).toBe(`${workerBase}/metrics`);
    const health = await fetch(`${workerBase}/healthz`);
    expect([health.status, await health.json()]).toEqual([200, { ok: true }]);
    const unscraped = await fetch(`${workerBase}/metrics`);
    expect([unscraped.status, (await unscraped.json()).error.code]).toEqual([401, 'unauthorized']);
    const api = await fetch(`${workerBase}/v1/endpoints`);
    expect([api.status, (await api.json()).error.code]).toEqual([404, 'route_not_found']);

    const routes = ['pg0', 'pg1', 'pg2', 'pg3'];
    await subscribe(base, account.api_key, routes);
    const events = 40;
    await ingestClicks(base, account.id, 100, events);
    const total = events * routes.length;
    await receiver.until(
      () => receiver.received.filter((r) => routes.includes(r.route)).length >= total,
      60_000,
    );
    const delivered = (s: CliService) =>
      s.logs.filter((l) => l.msg === 'attempt' && l.next === 'delivered').length;
    // The last attempt record may land in either process: whichever logs it ends the wait.
    await Promise.race(
      [server, worker].map((s) =>
        s
          .logged(() => delivered(server) + delivered(worker) >= total, 'every attempt logged')
          .catch(() => undefined),
      ),
    );
    console.log(`[cli postgres] serve delivered ${delivered(server)}, worker delivered ${delivered(worker)}`);
    expect(delivered(server) + delivered(worker)).toBeGreaterThanOrEqual(total);
    expect(delivered(worker)).toBeGreaterThan(0);
    expect(delivered(server)).toBeGreaterThan(0);
    // Each process counts the attempts it made: the worker's are scraped from the worker.
    const scrape = await fetch(`${workerBase}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(scrape.status).toBe(200);
    const counted = /^linkhooks_deliveries_total\{outcome="delivered"\} (\d+)$/m.exec(await scrape.text());
    expect(Number(counted?.[1])).toBe(delivered(worker));
    expect(await worker.stop()).toBe(0);
    expect(await server.stop()).toBe(0);
  });
});

describe.each(NODE_RUNTIMES)('linkhooks-sender on PostgreSQL, on %s', async (runtime) => {
  const bin = requireRuntime(runtime, 'the service on PostgreSQL');
  const node = bin && join(bin, 'node');
  const { up, db } = await pgDatabase(`cli_${runtime}`, node !== null);

  it.runIf(up)('migrates, serves, delivers ingested events and stops cleanly', async () => {
    expect(execFileSync(node!, ['--version'], { encoding: 'utf8' })).toMatch(`v${runtimeVersion(runtime)}`);
    const account = await migratedAccount(db, 'NodeCo', 'business', node!);
    const server = serve(['serve', '--db', db, '--port', '0', '--allow-private-networks'], node!);
    const base = await listening(server);
    const routes = [`${runtime}a`, `${runtime}b`];
    await subscribe(base, account.api_key, routes);
    const events = 10;
    await ingestClicks(base, account.id, 200, events);
    // The receiver keeps only deliveries signed with their endpoint's secret.
    await receiver.until(
      () => receiver.received.filter((r) => routes.includes(r.route)).length >= events * routes.length,
      60_000,
    );
    expect(await server.stop()).toBe(0);
  });
});

async function dropSchema(schema: string) {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
}
