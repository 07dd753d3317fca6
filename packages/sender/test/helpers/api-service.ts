/**
 * The management API as it runs: `createServiceListener` (`serve`'s server, ingest on its direct
 * path) on a loopback port over a real SQLite store,
 * with accounts on each plan, and a `call` helper that speaks HTTP to it with global fetch.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAccount } from '../../src/accounts.js';
import type { ManagementRouterOptions } from '../../src/api/router.js';
import { createServiceListener } from '../../src/api/service-app.js';
import type { SenderOptions } from '../../src/engine/sender.js';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { makeSender } from './harness.js';
import type { TestCertificates } from './test-ca.mjs';

/** No DNS here: names other than localhost do not resolve (the tests use IP literals). */
const offlineResolve: NonNullable<SenderOptions['resolve']> = (host, _options, callback) => {
  if (host === 'localhost') callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }), []);
};

export const SERVICE_TOKEN = 'svc_test_token_0123456789';

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
  json: any;
}

export interface CallOptions {
  key?: string | null;
  body?: unknown;
  /** Sent as is, instead of JSON.stringify(body). */
  raw?: string;
  headers?: Record<string, string>;
}

/**
 * `router`: the management router's own options. Failed sign-ins are allowed freely unless given:
 * most tests here check how auth answers, not how often it may fail.
 */
export async function startApi(
  certs: TestCertificates,
  options: Partial<SenderOptions> = {},
  router: Partial<ManagementRouterOptions> = {},
) {
  const dir = mkdtempSync(join(tmpdir(), 'linkhooks-api-'));
  const dbFile = join(dir, 'api.db');
  // A store given in the options (PostgreSQL) is used instead of the SQLite file, and closed here too.
  const store = options.store ?? createSqliteStore({ filename: dbFile });
  await store.migrate();
  const { sender, clock } = makeSender(certs, { store, resolve: offlineResolve, ...options });
  const listener = createServiceListener({
    sender,
    serviceToken: SERVICE_TOKEN,
    signInFailuresPerMinute: 1_000_000,
    apiRequestsPerMinute: 1_000_000,
    ...router,
  });
  const server: Server = await new Promise((resolve) => {
    const s = createServer(listener).listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const [alice, bob, pro] = [
    await createAccount(store, { name: 'Alice Ltd', plan: 'business' }),
    await createAccount(store, { name: 'Bob Inc', plan: 'enterprise' }),
    await createAccount(store, { name: 'Pro Co', plan: 'pro' }),
  ];

  async function call(method: string, path: string, options: CallOptions = {}): Promise<ApiResponse> {
    const key = options.key === undefined ? alice.apiKey : options.key;
    const headers: Record<string, string> = { ...options.headers };
    if (key) headers.authorization = `Bearer ${key}`;
    let body: string | undefined = options.raw;
    if (body === undefined && options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const response = await fetch(base + path, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, text, json };
  }

  /** Signs in to the dashboard with `apiKey` (Alice's by default); resolves with its session cookie. */
  async function signIn(apiKey = alice.apiKey): Promise<string> {
    const res = await call('POST', '/v1/session', {
      key: null,
      body: { api_key: apiKey },
      headers: { 'x-linkhooks-csrf': '1' },
    });
    if (res.status !== 201) throw new Error(`sign-in answered ${res.status}: ${res.text}`);
    return (res.headers.get('set-cookie') ?? '').split(';')[0]!;
  }

  async function close() {
    await sender.stop(0);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }

  return { base, server, store, dbFile, sender, clock, call, signIn, close, alice, bob, pro };
}

export type Api = Awaited<ReturnType<typeof startApi>>;
