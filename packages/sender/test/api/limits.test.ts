/**
 * Quotas and rate limits over HTTP (design D26): each answers 429 with Retry-After and a message
 * that says what to do, and nothing already accepted is dropped. Limits are set low here and time
 * moves on the engine's manual clock.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sampleEventData } from '@linkhooks/protocol';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { SenderStore } from '../../src/store/port.js';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { type Api, type ApiResponse, SERVICE_TOKEN, startApi } from '../helpers/api-service.js';
import { storeEndpoint } from '../helpers/endpoints.js';
import { pgSchemas } from '../helpers/pg-schemas.js';
import { PG_URL, requireService } from '../helpers/services.js';
import { createTestCertificates } from '../helpers/test-ca.mjs';

const certs = createTestCertificates();
const pgUp = await requireService('PostgreSQL', PG_URL);
const schemas = pgSchemas('lh_limits');
const dir = mkdtempSync(join(tmpdir(), 'linkhooks-limits-'));
let api: Api;
afterEach(async () => {
  await api.close();
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await schemas.drop();
});

/** The stores the statistics' turns are tried on. */
const statsStores: [string, () => SenderStore][] = [
  ['SQLite', () => createSqliteStore({ filename: join(dir, 'turns.db') })],
  ...(pgUp
    ? [
        ['PostgreSQL', () => createPostgresStore({ connectionString: PG_URL, schema: schemas.fresh() })] as [
          string,
          () => SenderStore,
        ],
      ]
    : []),
];

const click = (n: number) => ({ ...sampleEventData('click'), click_id: `clk_limit_${n}` });

function expectLimited(res: ApiResponse, code: 'rate_limited' | 'quota_exceeded') {
  expect(res.status).toBe(429);
  expect(res.json.error.code).toBe(code);
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(res.json.error.message).toMatch(/try again|delete one/);
}

const createEndpoint = (n: number) =>
  api.call('POST', '/v1/endpoints', {
    body: { url: `https://127.0.0.1:${4000 + n}/hook`, events: ['click'] },
  });

describe('limits', () => {
  it('refuses an endpoint past the account’s quota and keeps the ones it has', async () => {
    api = await startApi(certs, { quotas: { endpointsPerAccount: 2 } });
    expect((await createEndpoint(1)).status).toBe(201);
    expect((await createEndpoint(2)).status).toBe(201);
    const refused = await createEndpoint(3);
    expectLimited(refused, 'quota_exceeded');
    expect(refused.json.error.message).toContain('delete one');
    expect((await api.call('GET', '/v1/endpoints')).json.data).toHaveLength(2);
    // Another account has its own quota.
    expect((await createEndpoint(4)).status).toBe(429);
    const bobs = await api.call('POST', '/v1/endpoints', {
      key: api.bob.apiKey,
      body: { url: 'https://127.0.0.1:4100/hook', events: ['click'] },
    });
    expect(bobs.status).toBe(201);
  });

  // On PostgreSQL, where each request's count waits on the network and the six interleave.
  it.runIf(pgUp)('holds the endpoint quota for creations made together', async () => {
    api = await startApi(certs, {
      quotas: { endpointsPerAccount: 2 },
      store: createPostgresStore({ connectionString: PG_URL, schema: schemas.fresh() }),
    });
    const answers = await Promise.all([1, 2, 3, 4, 5, 6].map(createEndpoint));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 429, 429, 429, 429]);
    for (const refused of answers.filter((a) => a.status === 429)) expectLimited(refused, 'quota_exceeded');
    expect((await api.call('GET', '/v1/endpoints')).json.data).toHaveLength(2);
  });

  it('limits an account’s events per second after its burst, single and batch, and stores every accepted one', async () => {
    api = await startApi(certs, { quotas: { eventsPerSecond: 2, eventsBurst: 3 } });
    expect((await createEndpoint(1)).status).toBe(201);
    const ingest = (n: number, account = api.alice.account.id) =>
      api.call('POST', '/internal/v1/events', {
        key: SERVICE_TOKEN,
        body: { account_id: account, event: 'click', data: click(n) },
      });
    const accepted: string[] = [];
    for (let n = 0; n < 3; n++) {
      const res = await ingest(n);
      expect(res.status).toBe(202);
      accepted.push(res.json.event_id);
    }
    const over = await ingest(3);
    expectLimited(over, 'rate_limited');
    expect(over.headers.get('retry-after')).toBe('1');
    // Another account is not held back by this one.
    expect((await ingest(4, api.bob.account.id)).status).toBe(202);
    // A second later, two more tokens: a batch of four gets two in and two answered 429 in place.
    api.clock.advance(1_000);
    const batch = await api.call('POST', '/internal/v1/events/batch', {
      key: SERVICE_TOKEN,
      body: {
        events: [5, 6, 7, 8].map((n) => ({
          account_id: api.alice.account.id,
          event: 'click',
          data: click(n),
        })),
      },
    });
    expect(batch.status).toBe(202);
    expect(batch.json.results.map((r: { status: number }) => r.status)).toEqual([202, 202, 429, 429]);
    expect(batch.json.results[2].error.code).toBe('rate_limited');
    expect(Number(batch.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    accepted.push(batch.json.results[0].event_id, batch.json.results[1].event_id);
    // An invalid event does not use up the allowance.
    api.clock.advance(500);
    const invalid = await api.call('POST', '/internal/v1/events', {
      key: SERVICE_TOKEN,
      body: { account_id: api.alice.account.id, event: 'click', data: { click_id: 1 } },
    });
    expect(invalid.status).toBe(400);
    expect((await ingest(9)).status).toBe(202);
    // Every accepted event is stored, with its delivery.
    const log = await api.call('GET', '/v1/deliveries?limit=100');
    const logged = new Set(log.json.data.map((d: { event_id: string }) => d.event_id));
    for (const id of accepted) expect(logged.has(id)).toBe(true);
  });

  it('limits test events and manual retries per minute', async () => {
    api = await startApi(certs, { quotas: { testSendsPerMinute: 2, retriesPerMinute: 1 } });
    const endpoint = (await createEndpoint(1)).json.id as string;
    const test = () => api.call('POST', `/v1/endpoints/${endpoint}/test`, { body: {} });
    const first = await test();
    expect(first.status).toBe(202);
    expect((await test()).status).toBe(202);
    const third = await test();
    expectLimited(third, 'rate_limited');
    expect(third.headers.get('retry-after')).toBe('30');
    const delivery = first.json.deliveries[0].id as string;
    expect((await api.call('POST', `/v1/deliveries/${delivery}/retry`)).status).toBe(202);
    expectLimited(await api.call('POST', `/v1/deliveries/${delivery}/retry`), 'rate_limited');
    api.clock.advance(60_000);
    expect((await api.call('POST', `/v1/deliveries/${delivery}/retry`)).status).toBe(202);
  });

  it.each(statsStores)(
    "takes the accounts' statistics reads in turns, and refuses one account's past its share (%s)",
    async (_name, storeOf) => {
      // Each read waits for the test's word before it reads (while `holding`): which account's
      // started, in order.
      const started: string[] = [];
      const release: (() => void)[] = [];
      let onStart = () => {};
      let holding = true;
      const base = storeOf();
      const store: SenderStore = {
        ...base,
        async endpointStats(accountId, id, window) {
          started.push(accountId);
          onStart();
          if (holding) await new Promise<void>((resolve) => release.push(resolve));
          return base.endpointStats(accountId, id, window);
        },
      };
      const startedAll = (n: number) =>
        new Promise<void>((resolve) => {
          onStart = () => started.length >= n && resolve();
          onStart();
        });
      api = await startApi(certs, { store });
      const alice = api.alice.account.id;
      const bob = api.bob.account.id;
      await storeEndpoint(store, alice, 'ep_alice', api.clock.now());
      await storeEndpoint(store, bob, 'ep_bob', api.clock.now());
      // Four of Alice's: two read at once, two wait; a fifth, over HTTP, is refused at once.
      const alices = [1, 2, 3, 4].map(() => api.sender.endpointStats(alice, 'ep_alice', { window: '30d' }));
      await startedAll(2);
      // A fifth is refused at once, not queued: settled before the event loop's next turn.
      const fifth = api.sender.endpointStats(alice, 'ep_alice').then(
        () => 'answered',
        (error: unknown) => error,
      );
      const nextTurn = new Promise((resolve) => setImmediate(() => resolve('waiting')));
      expect(await Promise.race([fifth, nextTurn])).toMatchObject({ code: 'rate_limited' });
      // Over HTTP too; not held, should it be read, so that a fifth answered fails here at once.
      holding = false;
      const over = await api.call('GET', '/v1/endpoints/ep_alice/stats?window=30d');
      holding = true;
      expectLimited(over, 'rate_limited');
      expect(over.headers.get('retry-after')).toBe('1');
      expect(over.json.error.message).toBe(
        'too many statistics requests for this account at once; try again in 1 s',
      );
      // Bob's waits for one to end, then goes before the two of Alice's that came first.
      const bobs = api.sender.endpointStats(bob, 'ep_bob');
      release.shift()!();
      await startedAll(3);
      expect(started).toEqual([alice, alice, bob]);
      while (started.length < 5 || release.length > 0) {
        const next = release.shift();
        if (next) next();
        else await startedAll(started.length + 1);
      }
      expect((await bobs).window).toBe('24h');
      for (const stats of await Promise.all(alices)) expect(stats.window).toBe('30d');
      // Their turns over, Alice's next is taken, over HTTP too.
      const after = api.call('GET', '/v1/endpoints/ep_alice/stats');
      await startedAll(6);
      release.shift()!();
      expect((await after).status).toBe(200);
    },
  );

  it("takes the log's searches in turns by account, apart from the statistics, and refuses past an account's share", async () => {
    const base = createSqliteStore({ filename: join(dir, 'search-turns.db') });
    const started: string[] = [];
    const release: (() => void)[] = [];
    let holding = true;
    const store: SenderStore = {
      ...base,
      async listDeliveries(accountId, filter) {
        if (filter.search !== undefined && holding) {
          started.push(accountId);
          await new Promise<void>((resolve) => release.push(resolve));
        }
        return base.listDeliveries(accountId, filter);
      },
    };
    api = await startApi(certs, { store });
    const [alice, bob] = [api.alice.account.id, api.bob.account.id];
    const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
    // Four of Alice's searches, each in the turns once asked: two read at once, two wait.
    const held = ['clk_1', 'clk_2', 'clk_3', 'clk_4'].map((search) =>
      api.sender.listDeliveries(alice, { search, limit: 20 }),
    );
    while (started.length < 2) await turn();
    // Not held, should it be read, so that a fifth answered fails here at once.
    holding = false;
    const fifth = await api.call('GET', '/v1/deliveries?q=clk_5');
    holding = true;
    expectLimited(fifth, 'rate_limited');
    expect(fifth.headers.get('retry-after')).toBe('1');
    expect(fifth.json.error.message).toBe('too many log searches for this account at once; try again in 1 s');
    // Her statistics are not in the searches' turns: read at once (no such endpoint), not refused.
    await expect(api.sender.endpointStats(alice, 'ep_none')).rejects.toMatchObject({ code: 'not_found' });
    // A page that is no search reads a page's worth, outside the turns.
    expect((await api.call('GET', '/v1/deliveries')).status).toBe(200);
    // Bob's search waits for a slot, then goes before the two of Alice's that came first.
    const bobs = api.sender.listDeliveries(bob, { search: 'clk_1', limit: 20 });
    await turn();
    expect(started).toEqual([alice, alice]);
    release.shift()!();
    while (started.length < 3) await turn();
    expect(started).toEqual([alice, alice, bob]);
    while (started.length < 5 || release.length > 0) {
      const next = release.shift();
      if (next) next();
      else await turn();
    }
    expect(started).toEqual([alice, alice, bob, alice, alice]);
    for (const page of await Promise.all(held)) expect(page.items).toEqual([]);
    expect((await bobs).items).toEqual([]);
  });

  it.runIf(pgUp)(
    'reads one statistics window at a time with a PostgreSQL pool of 4 connections',
    async () => {
      const base = createPostgresStore({ connectionString: PG_URL, schema: schemas.fresh(), poolSize: 4 });
      const started: string[] = [];
      const release: (() => void)[] = [];
      const store: SenderStore = {
        ...base,
        async endpointStats(accountId, id, window) {
          started.push(accountId);
          await new Promise<void>((resolve) => release.push(resolve));
          return base.endpointStats(accountId, id, window);
        },
      };
      api = await startApi(certs, { store });
      const [alice, bob] = [api.alice.account.id, api.bob.account.id];
      await storeEndpoint(store, alice, 'ep_alice', api.clock.now());
      await storeEndpoint(store, bob, 'ep_bob', api.clock.now());
      const reads = [api.sender.endpointStats(alice, 'ep_alice'), api.sender.endpointStats(bob, 'ep_bob')];
      // Reads let in together start in the same turn of the event loop (2 at once with 10 connections).
      while (release.length === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(started).toEqual([alice]);
      release.shift()!();
      while (release.length === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      expect(started).toEqual([alice, bob]);
      release.shift()!();
      for (const stats of await Promise.all(reads)) expect(stats.window).toBe('24h');
    },
  );

  it('answers 429 to an address after too many failed sign-ins, even with the right key', async () => {
    api = await startApi(certs, {}, { signInFailuresPerMinute: 3 });
    expect((await api.call('GET', '/v1/endpoints', { key: 'lh_wrong_1' })).status).toBe(401);
    expect((await api.call('GET', '/v1/endpoints', { key: 'lh_wrong_2' })).status).toBe(401);
    const signIn = await api.call('POST', '/v1/session', {
      key: null,
      body: { api_key: 'lh_wrong_3' },
      headers: { 'x-linkhooks-csrf': '1' },
    });
    expect(signIn.status).toBe(401);
    const locked = await api.call('GET', '/v1/endpoints');
    expectLimited(locked, 'rate_limited');
    expect(locked.json.error.message).toContain('failed sign-ins');
    // Requests that present no key are not sign-ins: the health check and the event types still answer.
    expect((await api.call('GET', '/healthz', { key: null })).status).toBe(200);
  });

  it('keeps one allowance per kind of credential: a customer’s wrong keys never hold back ingest or a scrape', async () => {
    api = await startApi(certs, {}, { signInFailuresPerMinute: 2 });
    for (const wrong of ['lh_wrong_1', 'lh_wrong_2']) {
      expect((await api.call('GET', '/v1/endpoints', { key: wrong })).status).toBe(401);
    }
    expectLimited(await api.call('GET', '/v1/endpoints'), 'rate_limited');
    // The same address ingests with the service token, and scrapes the metrics (open here)
    // whatever it sends.
    const event = { account_id: api.alice.account.id, event: 'click', data: click(1) };
    const single = await api.call('POST', '/internal/v1/events', { key: SERVICE_TOKEN, body: event });
    expect(single.status).toBe(202);
    const batch = await api.call('POST', '/internal/v1/events/batch', {
      key: SERVICE_TOKEN,
      body: { events: [{ ...event, data: click(2) }] },
    });
    expect(batch.status).toBe(202);
    expect((await api.call('GET', '/metrics', { key: 'lh_wrong_3' })).status).toBe(200);
    // Wrong service tokens fill the service's own allowance, and leave the account's as it was.
    for (const wrong of ['svc_wrong_1', 'svc_wrong_2']) {
      expect((await api.call('GET', '/internal/v1/accounts', { key: wrong })).status).toBe(401);
    }
    expectLimited(await api.call('GET', '/internal/v1/accounts', { key: SERVICE_TOKEN }), 'rate_limited');
    expectLimited(await api.call('GET', '/v1/endpoints'), 'rate_limited');
    expect((await api.call('GET', '/v1/endpoints', { key: api.bob.apiKey })).status).toBe(429);
  });

  it('checks no credential at a path spelt otherwise, so no guess there goes uncounted', async () => {
    api = await startApi(
      certs,
      {},
      { signInFailuresPerMinute: 1, metricsToken: 'metrics_token_0123456789abcdef' },
    );
    for (const [path, key] of [
      ['/INTERNAL/v1/accounts', 'svc_guess'],
      ['/internal/v1/accounts/', 'svc_guess'],
      ['/metrics/', 'guess'],
      ['/Metrics', 'guess'],
      ['/V1/endpoints', 'lh_guess'],
    ] as const) {
      const res = await api.call('GET', path, { key });
      expect(res.status, path).toBe(404);
    }
    // The one allowance of each kind is untouched: the right credentials still answer.
    expect((await api.call('GET', '/internal/v1/accounts', { key: SERVICE_TOKEN })).status).toBe(200);
    expect((await api.call('GET', '/metrics', { key: 'metrics_token_0123456789abcdef' })).status).toBe(200);
    expect((await api.call('GET', '/v1/endpoints')).status).toBe(200);
  });

  it('counts a wrong metrics token against the metrics’ own allowance', async () => {
    api = await startApi(
      certs,
      {},
      { signInFailuresPerMinute: 1, metricsToken: 'metrics_token_0123456789abcdef' },
    );
    expect((await api.call('GET', '/metrics', { key: 'wrong' })).status).toBe(401);
    expectLimited(
      await api.call('GET', '/metrics', { key: 'metrics_token_0123456789abcdef' }),
      'rate_limited',
    );
    expect((await api.call('GET', '/v1/endpoints')).status).toBe(200);
  });

  it('counts a Bearer key in any case as a sign-in', async () => {
    api = await startApi(certs, {}, { signInFailuresPerMinute: 2 });
    for (const scheme of ['bearer', 'BEARER']) {
      const res = await api.call('GET', '/v1/endpoints', {
        key: null,
        headers: { authorization: `${scheme} lh_wrong` },
      });
      expect(res.status).toBe(401);
    }
    expectLimited(await api.call('GET', '/v1/endpoints'), 'rate_limited');
  });

  it('paces one account’s API requests, the dashboard’s included, and no other account’s or ingest', async () => {
    api = await startApi(certs, {}, { apiRequestsPerMinute: 3 });
    for (let i = 0; i < 3; i++) expect((await api.call('GET', '/v1/endpoints')).status).toBe(200);
    const refused = await api.call('GET', '/v1/deliveries');
    expectLimited(refused, 'rate_limited');
    expect(refused.json.error.message).toMatch(
      /^too many API requests for this account; try again in \d+ s$/,
    );
    // A dashboard session of the account counts against the same allowance.
    const cookie = await api.signIn();
    expectLimited(await api.call('GET', '/v1/endpoints', { key: null, headers: { cookie } }), 'rate_limited');
    expect((await api.call('GET', '/v1/endpoints', { key: api.bob.apiKey })).status).toBe(200);
    const ingest = await api.call('POST', '/internal/v1/events', {
      key: SERVICE_TOKEN,
      body: { account_id: api.alice.account.id, event: 'click', data: click(1) },
    });
    expect(ingest.status).toBe(202);
  });

  /** A service behind a trusted proxy, 2 failed sign-ins a minute; `from` calls as a forwarded client. */
  const behindProxy = async () => {
    api = await startApi(certs, {}, { signInFailuresPerMinute: 2, trustProxy: true });
    return (forwardedFor: string, key = 'lh_wrong') =>
      api.call('GET', '/v1/endpoints', { key, headers: { 'x-forwarded-for': forwardedFor } });
  };

  it('behind a trusted proxy, counts the client address the proxy forwarded last', async () => {
    const from = await behindProxy();
    expect((await from('203.0.113.1')).status).toBe(401);
    // A client cannot pass for another by prepending an address: the proxy's last one counts.
    expect((await from('198.51.100.7, 203.0.113.1')).status).toBe(401);
    expectLimited(await from('203.0.113.1', api.alice.apiKey), 'rate_limited');
    expect((await from('203.0.113.2', api.alice.apiKey)).status).toBe(200);
  });

  it('counts an IPv6 client by its /64: a new address of the same network does not start afresh', async () => {
    const from = await behindProxy();
    expect((await from('2001:db8:7:1::1')).status).toBe(401);
    expect((await from('2001:db8:7:1::2')).status).toBe(401);
    expectLimited(await from('2001:db8:7:1:abcd::9', api.alice.apiKey), 'rate_limited');
    expect((await from('2001:db8:7:2::1', api.alice.apiKey)).status).toBe(200);
  });
});
