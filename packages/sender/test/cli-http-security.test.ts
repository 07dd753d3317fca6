/**
 * `linkhooks-sender serve` as it runs behind a TLS proxy, or not (design D28): with
 * LINKHOOKS_TRUST_PROXY, `X-Forwarded-Proto: https` gives a Secure session cookie and HSTS; without
 * it the same forged header changes nothing. A malformed URL answers 400 and logs nothing at
 * error level.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliService, runCli, startCli } from './helpers/cli-process.js';

const env = { LINKHOOKS_SERVICE_TOKEN: 'svc_http_security_0123456789', LINKHOOKS_LOG_LEVEL: 'info' };
const PINO_ERROR = 50;
let dir: string;
const started: CliService[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'linkhooks-http-security-'));
});
afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
});

/** A database with one business account, and `serve` on a free port over it. */
async function serveWith(name: string, args: string[], extraEnv: Record<string, string> = {}) {
  const db = `sqlite:${join(dir, `${name}.db`)}`;
  const created = await runCli([
    'accounts',
    'create',
    '--name',
    name,
    '--plan',
    'business',
    '--json',
    '--db',
    db,
  ]);
  expect(created.code).toBe(0);
  const apiKey = (JSON.parse(created.stdout) as { api_key: string }).api_key;
  const service = startCli(['serve', '--db', db, '--port', '0', ...args], { ...env, ...extraEnv });
  started.push(service);
  const line = await service.logged((l) => typeof l.url === 'string', 'listening');
  return { service, base: line.url as string, apiKey };
}

async function signIn(base: string, apiKey: string) {
  return fetch(`${base}/v1/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-linkhooks-csrf': '1', 'x-forwarded-proto': 'https' },
    body: JSON.stringify({ api_key: apiKey }),
  });
}

describe('serve behind a TLS proxy', () => {
  it('trusts X-Forwarded-Proto only with LINKHOOKS_TRUST_PROXY (or --trust-proxy)', async () => {
    const [proxied, direct, flagged] = await Promise.all([
      serveWith('proxied', [], { LINKHOOKS_TRUST_PROXY: '1' }),
      serveWith('direct', []),
      serveWith('flagged', ['--trust-proxy']),
    ]);
    for (const { base, apiKey } of [proxied, flagged]) {
      const res = await signIn(base, apiKey);
      expect(res.status).toBe(201);
      expect(res.headers.get('set-cookie')).toMatch(/; Secure$/);
      expect(res.headers.get('strict-transport-security')).toBe('max-age=31536000');
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
    const forged = await signIn(direct.base, direct.apiKey);
    expect(forged.status).toBe(201);
    expect(forged.headers.get('set-cookie')).not.toContain('Secure');
    expect(forged.headers.get('strict-transport-security')).toBeNull();
    expect(forged.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('says so in --help, and refuses a LINKHOOKS_TRUST_PROXY it cannot read', async () => {
    const help = await runCli(['--help']);
    expect(help.stdout).toMatch(/--trust-proxy/);
    expect(help.stdout).toMatch(/LINKHOOKS_TRUST_PROXY/);
    const bad = await runCli(['serve', '--db', `sqlite:${join(dir, 'bad.db')}`], {
      LINKHOOKS_TRUST_PROXY: 'yes',
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/LINKHOOKS_TRUST_PROXY must be 1, true, 0 or false/);
  });
});

describe('a malformed URL', () => {
  it('answers 400 without credentials and logs nothing at error level', async () => {
    const { service, base } = await serveWith('malformed', []);
    for (const path of ['/v1/endpoints/%E0%A4%A', '/dashboard/%', '/v1/deliveries/%zz/retry']) {
      const res = await fetch(base + path, { method: path.endsWith('retry') ? 'POST' : 'GET' });
      expect(res.status, path).toBe(400);
      expect((await res.json()).error.code).toBe('invalid_request');
    }
    // Every line is in once the process has closed its output.
    const closed = once(service.child, 'close');
    expect(await service.stop()).toBe(0);
    await closed;
    expect(service.logs.some((l) => l.msg === 'stopped')).toBe(true);
    expect(service.logs.filter((l) => l.level >= PINO_ERROR)).toEqual([]);
    expect(service.output()).not.toMatch(/URIError|\n\s+at /);
  });
});
