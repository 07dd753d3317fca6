/**
 * Portal links over HTTP (design D54), on SQLite and on PostgreSQL: the platform's route takes the
 * service token only, refuses bad input with a plain 400 and an unknown account with a 404; a link
 * signs its account in once (of two opened at once, exactly one; on PostgreSQL across two
 * services sharing the database), not after its time, not for a deleted account, and the session
 * sees that account only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts.js';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { type Api, SERVICE_TOKEN, startApi } from '../helpers/api-service.js';
import { addEndpoint } from '../helpers/endpoints.js';
import { type HttpsReceiver, startHttpsReceiver } from '../helpers/https-receiver.js';
import { pgSchemas } from '../helpers/pg-schemas.js';
import { PG_URL, requireService } from '../helpers/services.js';

const pgUp = await requireService('PostgreSQL', PG_URL);
const schemas = pgSchemas('lh_portal');

let receiver: HttpsReceiver;
beforeAll(async () => {
  receiver = await startHttpsReceiver();
});
afterAll(async () => {
  await receiver.close();
  await schemas.drop();
});

/** Opens a link as a browser's first request would, without following the redirect. */
const open = (url: string, cookie?: string) =>
  fetch(url, { redirect: 'manual', ...(cookie ? { headers: { cookie } } : {}) });
const cookieOf = (res: Response) => (res.headers.get('set-cookie') ?? '').split(';')[0]!;

const backends: Array<[string, boolean, () => Promise<[Api, Api]>]> = [
  [
    'SQLite',
    true,
    async () => {
      const api = await startApi(receiver.certs);
      return [api, api];
    },
  ],
  [
    'PostgreSQL',
    pgUp,
    async () => {
      // Two services on one database, as two processes behind a load balancer would be.
      const schema = schemas.fresh();
      const pgStore = () => createPostgresStore({ connectionString: PG_URL, schema });
      const first = await startApi(receiver.certs, { store: pgStore() });
      return [first, await startApi(receiver.certs, { store: pgStore(), clock: first.clock })];
    },
  ],
];

describe.each(backends)('portal links on %s', (name, up, start) => {
  let api: Api;
  let other: Api;
  beforeAll(async () => {
    if (!up) return;
    [api, other] = await start();
  });
  afterAll(async () => {
    if (!up) return;
    await api.close();
    if (other !== api) await other.close();
  });

  const create = (body: unknown, key: string | null = SERVICE_TOKEN) =>
    api.call('POST', '/internal/v1/portal-sessions', { key, body });
  const linkFor = async (accountId: string, ttl?: number) => {
    const res = await create({ account_id: accountId, ...(ttl === undefined ? {} : { ttl_seconds: ttl }) });
    expect(res.status).toBe(201);
    return res.json as { url: string; expires_at: string };
  };

  it.runIf(up)('take the service token only', async () => {
    for (const key of [null, 'svc_wrong', api.alice.apiKey]) {
      const res = await create({ account_id: api.alice.account.id }, key);
      expect(res.status).toBe(401);
      expect(res.json.error.message).toMatch(/service token/);
    }
  });

  it.runIf(up)(
    'refuse bad input with a 400 that names the field, and an unknown account with a 404',
    async () => {
      const cases: Array<[unknown, RegExp]> = [
        [{}, /account_id/],
        [{ account_id: 42 }, /account_id/],
        [{ account_id: api.alice.account.id, ttl_seconds: 0 }, /ttl_seconds must be at least 1/],
        [{ account_id: api.alice.account.id, ttl_seconds: 3601 }, /ttl_seconds must be at most 3600/],
        [{ account_id: api.alice.account.id, ttl_seconds: 1.5 }, /ttl_seconds must be a whole number/],
        [{ account_id: api.alice.account.id, ttl_seconds: '60' }, /ttl_seconds/],
        [{ account_id: api.alice.account.id, next: '/x' }, /next/],
      ];
      for (const [body, message] of cases) {
        const res = await create(body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.json.error.message).toMatch(message);
      }
      const noBody = await api.call('POST', '/internal/v1/portal-sessions', { key: SERVICE_TOKEN });
      expect(noBody.status).toBe(400);
      const missing = await create({ account_id: 'acct_missing' });
      expect(missing.status).toBe(404);
      expect(missing.json.error.message).toBe('no account acct_missing');
      const pro = await create({ account_id: api.pro.account.id });
      expect(pro.status).toBe(403);
      expect(pro.json.error.code).toBe('plan_required');
    },
  );

  it.runIf(up)('answer a link to this service that works five minutes by default', async () => {
    const link = await linkFor(api.alice.account.id);
    expect(link.url).toMatch(new RegExp(`^${api.base}/portal\\?token=lhp_[A-Za-z0-9_-]{43}$`));
    expect(link.expires_at).toBe(new Date(api.clock.now() + 300_000).toISOString());
    expect((await linkFor(api.alice.account.id, 3600)).expires_at).toBe(
      new Date(api.clock.now() + 3_600_000).toISOString(),
    );
  });

  it.runIf(up)('sign in once: a session of that account only, and the token leaves the URL', async () => {
    const { endpoint: alices } = await addEndpoint(api.sender, receiver, {
      account: api.alice.account.id,
      route: `${name}-alice`,
    });
    const { endpoint: bobs } = await addEndpoint(api.sender, receiver, {
      account: api.bob.account.id,
      route: `${name}-bob`,
    });
    const link = await linkFor(api.alice.account.id);
    const first = await open(link.url);
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/dashboard');
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(first.headers.get('referrer-policy')).toBe('no-referrer');
    expect(first.headers.get('set-cookie')).toMatch(
      /^linkhooks_session=[\w-]{43}; HttpOnly; SameSite=Strict;/,
    );
    const cookie = cookieOf(first);

    const session = await api.call('GET', '/v1/session', { key: null, headers: { cookie } });
    expect(session.json.account.id).toBe(api.alice.account.id);
    const endpoints = await api.call('GET', '/v1/endpoints', { key: null, headers: { cookie } });
    expect(endpoints.status).toBe(200);
    const ids = endpoints.json.data.map((e: { id: string }) => e.id);
    expect(ids).toContain(alices.id);
    expect(ids).not.toContain(bobs.id);
    const foreign = await api.call('GET', `/v1/endpoints/${bobs.id}`, { key: null, headers: { cookie } });
    expect(foreign.status).toBe(404);

    const again = await open(link.url);
    expect(again.status).toBe(401);
    expect(again.headers.get('content-type')).toMatch(/^text\/html/);
    expect(again.headers.get('set-cookie')).toBeNull();
    const page = await again.text();
    expect(page).toMatch(/already been used/);
    expect(page).toMatch(/Go back to the app you came from/);
    expect(page).not.toMatch(/design|D\d+|token/i);
  });

  it.runIf(up)('let exactly one of two opened at once sign in', async () => {
    for (let round = 0; round < 5; round++) {
      const link = await linkFor(api.alice.account.id);
      // On PostgreSQL the two go to two services sharing the database.
      const url2 = link.url.replace(api.base, other.base);
      const statuses = (await Promise.all([open(link.url), open(url2)])).map((r) => r.status);
      expect(statuses.sort()).toEqual([303, 401]);
    }
  });

  it.runIf(up)('stop working at their time, by the injected clock', async () => {
    const ending = await linkFor(api.alice.account.id, 60);
    const later = await linkFor(api.alice.account.id, 60);
    api.clock.advance(59_999);
    expect((await open(ending.url)).status).toBe(303);
    api.clock.advance(1);
    const expired = await open(later.url);
    expect(expired.status).toBe(401);
    expect(await expired.text()).toMatch(/expired/);
  });

  it.runIf(up)('sign nobody in to an account being deleted, and end its portal sessions', async () => {
    const { account } = await createAccount(api.store, { name: 'Leaving Ltd', plan: 'business' }, api.clock);
    const used = await linkFor(account.id);
    const cookie = cookieOf(await open(used.url));
    expect((await api.call('GET', '/v1/session', { key: null, headers: { cookie } })).status).toBe(200);
    const pending = await linkFor(account.id);
    expect(await api.store.markAccountDeleted(account.id, api.clock.now())).toBe(true);
    const refused = await open(pending.url);
    expect(refused.status).toBe(401);
    expect(await refused.text()).toMatch(/no longer exists/);
    expect((await api.call('GET', '/v1/session', { key: null, headers: { cookie } })).status).toBe(401);
    const late = await create({ account_id: account.id });
    expect(late.status).toBe(404);
  });

  it.runIf(up)('leave the links never used to retention', async () => {
    const link = await linkFor(api.bob.account.id, 1);
    api.clock.advance(1_000);
    await api.sender.pruneLog();
    const res = await open(link.url);
    expect(res.status).toBe(401);
    // Pruned, so no longer known at all: not "expired" but "not valid".
    expect(await res.text()).toMatch(/not a valid link/);
  });
});

describe('portal links that cannot sign in', () => {
  it('count against the address’s failed sign-ins: past them, links from it answer 429 and are not looked up', async () => {
    const api = await startApi(receiver.certs, {}, { signInFailuresPerMinute: 3 });
    try {
      for (const n of [1, 2, 3])
        expect((await open(`${api.base}/portal?token=lhp_wrong_${n}`)).status).toBe(401);
      const limited = await open(`${api.base}/portal?token=lhp_wrong_4`);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await limited.text()).toContain('Too many links that could not sign in came from your network');
      // A good link from that address waits too, and is not used up meanwhile; API keys count apart.
      const made = await api.call('POST', '/internal/v1/portal-sessions', {
        key: SERVICE_TOKEN,
        body: { account_id: api.alice.account.id },
      });
      expect((await open(made.json.url)).status).toBe(429);
      expect((await api.call('GET', '/v1/endpoints')).status).toBe(200);
    } finally {
      await api.close();
    }
  });
});
