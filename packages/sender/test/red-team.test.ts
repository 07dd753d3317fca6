/**
 * Known attacks on the service, replayed end to end against `linkhooks-sender serve` started by its
 * CLI on a default SQLite set-up, each asserted closed. One database, two starts: first in
 * development mode (private networks allowed, so the test receiver on this machine gets real
 * deliveries), then as in production behind a trusted TLS proxy. Most of these have unit tests
 * beside their code; this file shows they hold in the service as shipped.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliService, runCli, startCli } from './helpers/cli-process.js';
import { type HttpsReceiver, startHttpsReceiver } from './helpers/https-receiver.js';
import { PG_URL, requireService } from './helpers/services.js';

const RECEIVER_CLI = fileURLToPath(new URL('../../receiver/dist/cli.js', import.meta.url));
const TOKEN = 'svc_red_team_0123456789abcdef';
const PINO_ERROR = 50;
let dir: string;
let db: string;
let receiver: HttpsReceiver;
let env: Record<string, string>;
let apiKey: string;
let accountId: string;
const started: CliService[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'linkhooks-red-team-'));
  db = join(dir, 'linkhooks.db');
  receiver = await startHttpsReceiver();
  writeFileSync(join(dir, 'ca.pem'), receiver.certs.ca);
  env = {
    LINKHOOKS_SERVICE_TOKEN: TOKEN,
    NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem'),
    LINKHOOKS_LOG_LEVEL: 'info',
  };
  const created = await runCli([
    'accounts',
    'create',
    '--name',
    'Red',
    '--plan',
    'business',
    '--json',
    '--db',
    `sqlite:${db}`,
  ]);
  ({ api_key: apiKey, id: accountId } = JSON.parse(created.stdout) as { id: string; api_key: string });
});
afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

async function serve(args: string[]) {
  const service = startCli(['serve', '--db', `sqlite:${db}`, '--port', '0', ...args], env);
  started.push(service);
  const line = await service.logged((l) => typeof l.url === 'string', 'listening');
  return { service, base: line.url as string };
}

async function call(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
) {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { res, status: res.status, text, json: text ? JSON.parse(text) : null };
}

const fileBytes = () =>
  Buffer.concat([db, `${db}-wal`, `${db}-shm`].filter(existsSync).map((f) => readFileSync(f)));

function runReceiverCli(args: string[], stdin: string, extraEnv: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string }>((resolve) => {
    const child = spawn(process.execPath, [RECEIVER_CLI, ...args], { env: { ...process.env, ...extraEnv } });
    let stdout = '';
    child.stdout.on('data', (c) => {
      stdout += c;
    });
    child.once('close', (code) => resolve({ code, stdout }));
    child.stdin.end(stdin);
  });
}

let endpoint: { id: string; secret: string };
/** The answer that created the endpoint, its secret shown. */
let createdAnswer: Response;
let delivered: { body: string; signature: string };

describe('development start: private networks allowed', () => {
  let dev: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    dev = await serve(['--allow-private-networks']);
  });
  afterAll(async () => {
    expect(await dev.service.stop()).toBe(0);
  });

  it('stores no endpoint secret and no API key in plaintext in the database, its -wal or -shm', async () => {
    const created = await call(
      dev.base,
      'POST',
      '/v1/endpoints',
      {},
      {
        url: receiver.route('red', 'pending'),
        events: ['link.deleted'],
      },
    );
    expect(created.status).toBe(201);
    endpoint = created.json;
    createdAnswer = created.res;
    receiver.route('red', endpoint.secret);
    const ingest = await call(
      dev.base,
      'POST',
      '/internal/v1/events',
      { authorization: `Bearer ${TOKEN}` },
      {
        account_id: accountId,
        event: 'link.deleted',
        data: { link_id: 1, slug: 'red' },
      },
    );
    expect(ingest.status).toBe(202);
    await receiver.until(() => receiver.received.some((r) => r.route === 'red'), 20_000);
    const hit = receiver.received.find((r) => r.route === 'red')!;
    const headers = receiver.hits.find((h) => h.headers['x-service-delivery-id'] === hit.deliveryId)!.headers;
    delivered = { body: hit.rawBody, signature: String(headers['x-service-signature']) };
    const bytes = fileBytes();
    expect(bytes.length).toBeGreaterThan(0);
    expect(bytes.includes(endpoint.secret)).toBe(false);
    expect(bytes.includes(apiKey)).toBe(false);
  });

  it('refuses the cloud metadata address even with --allow-private-networks', async () => {
    for (const url of ['https://169.254.169.254/latest/meta-data', 'https://[fd00:ec2::254]/']) {
      const res = await call(dev.base, 'POST', '/v1/endpoints', {}, { url, events: ['click'] });
      expect(res.status, url).toBe(400);
      expect(res.json.error.code).toBe('unsafe_url');
    }
  });

  it('answers secrets with nosniff and no-store', async () => {
    const { res, text } = await call(dev.base, 'GET', `/v1/endpoints/${endpoint.id}/secret`);
    expect(res.status).toBe(200);
    expect(text).toContain(endpoint.secret);
    for (const answer of [res, createdAnswer]) {
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      expect(answer.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('shows the receiver\'s 401 in the log as "invalid signature", with no configuration hints', async () => {
    receiver.behave('red', 'wrong-secret');
    const ingest = await call(
      dev.base,
      'POST',
      '/internal/v1/events',
      { authorization: `Bearer ${TOKEN}` },
      {
        account_id: accountId,
        event: 'link.deleted',
        data: { link_id: 2, slug: 'wrong' },
      },
    );
    const id = ingest.json.deliveries[0].id as string;
    await dev.service.logged((l) => l.msg === 'attempt' && l.delivery === id, 'the refused attempt');
    receiver.behave('red', 'ok');
    const detail = await call(dev.base, 'GET', `/v1/deliveries/${id}`);
    const attempt = detail.json.attempts[0];
    expect(attempt.status_code).toBe(401);
    expect(JSON.parse(attempt.response_snippet).error.message).toMatch(/^invalid signature\.?$/i);
    expect(attempt.response_snippet).not.toMatch(/hint|whitespace|prefix|re-?serial|secret/i);
  });
});

describe('production start: behind a trusted TLS proxy, private networks refused', () => {
  let prod: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    prod = await serve(['--trust-proxy']);
  });
  afterAll(async () => {
    expect(await prod.service.stop()).toBe(0);
    // Nothing above was worth an error-level line, and no stack trace was printed.
    expect(prod.service.logs.filter((l) => l.level >= PINO_ERROR)).toEqual([]);
    expect(prod.service.output()).not.toMatch(/URIError|\n\s+at /);
    expect(prod.service.output()).not.toContain(endpoint.secret);
    expect(prod.service.output()).not.toContain(apiKey);
  });

  async function signIn() {
    const res = await fetch(`${prod.base}/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-linkhooks-csrf': '1', 'x-forwarded-proto': 'https' },
      body: JSON.stringify({ api_key: apiKey }),
    });
    expect(res.status).toBe(201);
    return res;
  }

  it('gives the session cookie Secure when the proxy says https', async () => {
    const res = await signIn();
    expect(res.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict;.*; Secure$/);
    expect(res.headers.get('strict-transport-security')).toBe('max-age=31536000');
  });

  it('requires the CSRF header when a non-Bearer Authorization comes with the session cookie', async () => {
    const cookie = (await signIn()).headers.get('set-cookie')!.split(';')[0]!;
    for (const authorization of ['Basic cmVkOnRlYW0=', 'Digest username="red"', 'Bearer']) {
      const forged = await call(prod.base, 'POST', `/v1/endpoints/${endpoint.id}/secret/rotate`, {
        cookie,
        authorization,
      });
      expect(forged.status, authorization).toBe(403);
      expect(forged.json.error.code).toBe('csrf_check_failed');
    }
  });

  it('answers a malformed % escape in a route parameter with 400', async () => {
    for (const path of ['/v1/endpoints/%E0%A4%A', '/v1/deliveries/%zz']) {
      const res = await call(prod.base, 'GET', path);
      expect(res.status, path).toBe(400);
      expect(res.json.error.code).toBe('invalid_request');
    }
  });

  it('never names the address a refused internal host resolved to', async () => {
    const created = await call(
      prod.base,
      'POST',
      '/v1/endpoints',
      {},
      {
        url: `https://localhost:${receiver.port}/hooks/red`,
        events: ['click'],
      },
    );
    expect(created.status).toBe(400);
    expect(created.json.error.message).toMatch(/localhost/);
    expect(created.text).not.toMatch(/127\.0\.0\.1|::1/);
    // The endpoint made in development mode points at localhost: its delivery is refused at
    // connect time, and the log names the host only.
    const ingest = await call(
      prod.base,
      'POST',
      '/internal/v1/events',
      { authorization: `Bearer ${TOKEN}` },
      {
        account_id: accountId,
        event: 'link.deleted',
        data: { link_id: 3, slug: 'internal' },
      },
    );
    const id = ingest.json.deliveries[0].id as string;
    await prod.service.logged((l) => l.msg === 'attempt' && l.delivery === id, 'the refused attempt');
    const detail = await call(prod.base, 'GET', `/v1/deliveries/${id}`);
    expect(detail.json.attempts[0].failure_kind).toBe('dns');
    // The operator's log says why; the customer's log only that the name gives no public address.
    expect(prod.service.output()).toMatch(
      /"msg":"attempt"[^\n]*"refused":"loopback"|"refused":"loopback"[^\n]*"msg":"attempt"/,
    );
    expect(detail.text).not.toMatch(/loopback|allow-private-networks/);
    expect(detail.json.attempts[0].error_message).toMatch(/localhost/);
    expect(detail.text).not.toMatch(/127\.0\.0\.1|::1\b/);
    expect(prod.service.output()).not.toMatch(/127\.0\.0\.1[^:]/);
  });
});

describe('secrets kept off the command line (out of ps)', async () => {
  const pgUp = await requireService('PostgreSQL', PG_URL);

  it('linkhooks verify checks a real delivery with the secret from --secret-file or LINKHOOKS_SECRET', async () => {
    const secretFile = join(dir, 'endpoint-secret');
    writeFileSync(secretFile, `${endpoint.secret}\n`, { mode: 0o600 });
    const noEnv = { LINKHOOKS_SECRET: '' };
    const fromFile = await runReceiverCli(
      ['verify', '--secret-file', secretFile, '--signature', delivered.signature],
      delivered.body,
      noEnv,
    );
    expect(fromFile.code).toBe(0);
    expect(fromFile.stdout).toMatch(/valid/);
    const fromEnv = await runReceiverCli(['verify', '--signature', delivered.signature], delivered.body, {
      LINKHOOKS_SECRET: endpoint.secret,
    });
    expect(fromEnv.code).toBe(0);
    const wrong = await runReceiverCli(['verify', '--signature', delivered.signature], delivered.body, {
      LINKHOOKS_SECRET: `${endpoint.secret}x`,
    });
    expect(wrong.code).not.toBe(0);
  });

  it.runIf(pgUp)('linkhooks-sender takes the database password from --db-file or PGPASSWORD', async () => {
    const schema = `red_team_${process.pid}`;
    const url = new URL(`${PG_URL}?schema=${schema}`);
    url.password = 'never-in-argv';
    const dbFile = join(dir, 'db-url');
    writeFileSync(dbFile, url.toString(), { mode: 0o600 });
    const viaFile = await runCli(['migrate', '--db-file', dbFile]);
    expect(viaFile.code, viaFile.stderr).toBe(0);
    expect(viaFile.stdout).not.toContain('never-in-argv');
    const viaEnv = await runCli(['migrate', '--db', `${PG_URL}?schema=${schema}`], {
      PGPASSWORD: 'never-in-argv',
    });
    expect(viaEnv.code, viaEnv.stderr).toBe(0);
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  });
});
