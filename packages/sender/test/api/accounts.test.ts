/**
 * The platform's account routes over HTTP (design D37): list accounts and keys (never a key
 * itself), rotate with a grace, revoke (its dashboard sessions end with it), delete an account with
 * everything it owns; each under the service token, with 4xx and a plain message for bad input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts.js';
import { type Api, SERVICE_TOKEN, startApi } from '../helpers/api-service.js';
import { addEndpoint } from '../helpers/endpoints.js';
import { type HttpsReceiver, startHttpsReceiver } from '../helpers/https-receiver.js';

let receiver: HttpsReceiver;
let api: Api;

beforeAll(async () => {
  receiver = await startHttpsReceiver();
  api = await startApi(receiver.certs);
});
afterAll(async () => {
  await api.close();
  await receiver.close();
});

const platform = (method: string, path: string, body?: unknown) =>
  api.call(method, path, { key: SERVICE_TOKEN, ...(body === undefined ? {} : { body }) });
const newAccount = (name = 'Carol GmbH') => createAccount(api.store, { name, plan: 'business' }, api.clock);
const works = async (apiKey: string) => (await api.call('GET', '/v1/endpoints', { key: apiKey })).status;

async function signIn(apiKey: string) {
  const res = await api.call('POST', '/v1/session', {
    key: null,
    body: { api_key: apiKey },
    headers: { 'x-linkhooks-csrf': '1' },
  });
  expect(res.status).toBe(201);
  return (res.headers.get('set-cookie') ?? '').split(';')[0]!;
}

describe('the account routes', () => {
  it('take the service token only', async () => {
    for (const key of [null, api.alice.apiKey, 'svc_wrong']) {
      const res = await api.call('GET', '/internal/v1/accounts', { key });
      expect(res.status).toBe(401);
    }
  });

  it('list accounts a page at a time, and refuse a bad limit', async () => {
    const first = await platform('GET', '/internal/v1/accounts?limit=2');
    expect(first.status).toBe(200);
    expect(first.json.data).toHaveLength(2);
    const rest = await platform('GET', `/internal/v1/accounts?cursor=${first.json.next_cursor}&limit=1000`);
    const ids = [...first.json.data, ...rest.json.data].map((a: { id: string }) => a.id);
    for (const a of [api.alice, api.bob, api.pro]) expect(ids).toContain(a.account.id);
    expect(first.json.data[0]).toEqual({
      id: expect.any(String),
      name: expect.any(String),
      plan: expect.any(String),
      created_at: expect.any(String),
    });
    for (const limit of ['0', '1001', 'ten']) {
      const res = await platform('GET', `/internal/v1/accounts?limit=${limit}`);
      expect(res.status).toBe(400);
      expect(res.json.error.message).toMatch(/limit/);
    }
    // A cursor that no page gave is refused, not read as the first page or as the end.
    for (const cursor of ['garbage', 'dlv_01JD8X3K9Q2W5E7R9T1Y3V5Z7P']) {
      const res = await platform('GET', `/internal/v1/accounts?cursor=${cursor}`);
      expect(res.status).toBe(400);
      expect(res.json.error.message).toContain('cursor must be the next_cursor of a page before');
    }
  });

  it('list an account’s keys by id and first characters, never the key', async () => {
    const res = await platform('GET', `/internal/v1/accounts/${api.alice.account.id}/keys`);
    expect(res.status).toBe(200);
    expect(res.json.data).toHaveLength(1);
    expect(res.json.data[0]).toMatchObject({
      prefix: api.alice.apiKey.slice(0, 12),
      status: 'active',
      revoked_at: null,
    });
    expect(res.text).not.toContain(api.alice.apiKey);
    expect((await platform('GET', '/internal/v1/accounts/acct_missing/keys')).status).toBe(404);
  });

  it('note when a key was last used, to the minute', async () => {
    const { account, apiKey } = await newAccount();
    const keys = () => platform('GET', `/internal/v1/accounts/${account.id}/keys`);
    expect((await keys()).json.data[0].last_used_at).toBeNull();
    await works(apiKey);
    expect((await keys()).json.data[0].last_used_at).toBe(new Date(api.clock.now()).toISOString());
  });
});

describe('rotating and revoking keys', () => {
  it('keeps the old key working for the grace, then only the new one', async () => {
    const { account, apiKey } = await newAccount();
    const res = await platform('POST', `/internal/v1/accounts/${account.id}/keys/rotate`, {
      grace_seconds: 600,
    });
    expect(res.status).toBe(201);
    const fresh = res.json.api_key as string;
    expect(fresh).toMatch(/^lhk_/);
    expect(res.json.key).toMatchObject({ prefix: fresh.slice(0, 12), status: 'active' });
    expect(res.json.previous).toHaveLength(1);
    expect(res.json.previous[0]).toMatchObject({
      status: 'expiring',
      expires_at: new Date(api.clock.now() + 600_000).toISOString(),
    });
    expect(await works(apiKey)).toBe(200);
    expect(await works(fresh)).toBe(200);
    api.clock.advance(600_000);
    expect(await works(apiKey)).toBe(401);
    expect(await works(fresh)).toBe(200);
    const listed = await platform('GET', `/internal/v1/accounts/${account.id}/keys`);
    expect(listed.json.data.map((k: { status: string }) => k.status)).toEqual(['expired', 'active']);
    expect(listed.text).not.toContain(fresh);
  });

  it('ends the old key at once with grace 0, and by default after an hour', async () => {
    const { account, apiKey } = await newAccount();
    const now = await platform('POST', `/internal/v1/accounts/${account.id}/keys/rotate`, {
      grace_seconds: 0,
    });
    expect(await works(apiKey)).toBe(401);
    const byDefault = await platform('POST', `/internal/v1/accounts/${account.id}/keys/rotate`);
    expect(byDefault.json.previous[0].expires_at).toBe(new Date(api.clock.now() + 3_600_000).toISOString());
    expect(await works(now.json.api_key)).toBe(200);
  });

  it('refuses a bad grace or an unknown account with a plain message', async () => {
    const { account } = await newAccount();
    for (const grace_seconds of [-1, 1.5, 86_401, '60']) {
      const res = await platform('POST', `/internal/v1/accounts/${account.id}/keys/rotate`, {
        grace_seconds,
      });
      expect(res.status, String(grace_seconds)).toBe(400);
      expect(res.json.error.message).toMatch(/grace_seconds/);
    }
    expect((await platform('POST', '/internal/v1/accounts/acct_missing/keys/rotate')).status).toBe(404);
  });

  it('revokes a key at once, and the dashboard sessions signed in with it end', async () => {
    const { account, apiKey } = await newAccount();
    const cookie = await signIn(apiKey);
    expect((await api.call('GET', '/v1/session', { key: null, headers: { cookie } })).status).toBe(200);
    const [key] = (await platform('GET', `/internal/v1/accounts/${account.id}/keys`)).json.data;
    const res = await platform('POST', `/internal/v1/accounts/${account.id}/keys/${key.id}/revoke`);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ id: key.id, status: 'revoked' });
    expect(await works(apiKey)).toBe(401);
    expect((await api.call('GET', '/v1/session', { key: null, headers: { cookie } })).status).toBe(401);
    // Another account's key, or none: 404.
    const other = await platform('POST', `/internal/v1/accounts/${api.bob.account.id}/keys/${key.id}/revoke`);
    expect(other.status).toBe(404);
    expect(other.json.error.message).toBe(`account ${api.bob.account.id} has no key ${key.id}`);
  });
});

describe('deleting an account', () => {
  it('removes what it owns; its key is refused and its events are not taken any more', async () => {
    const { account, apiKey } = await newAccount('Doomed Ltd');
    const { endpoint } = await addEndpoint(api.sender, receiver, { account: account.id });
    const ingest = () =>
      api.call('POST', '/internal/v1/events', {
        key: SERVICE_TOKEN,
        body: { account_id: account.id, event: 'link.deleted', data: { link_id: 1, slug: 'gone' } },
      });
    expect((await ingest()).status).toBe(202);
    const cookie = await signIn(apiKey);

    const res = await platform('DELETE', `/internal/v1/accounts/${account.id}`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ id: account.id, deleted: true, removed: expect.any(Number) });
    expect(res.json.removed).toBeGreaterThanOrEqual(3);

    expect(await works(apiKey)).toBe(401);
    expect((await api.call('GET', '/v1/session', { key: null, headers: { cookie } })).status).toBe(401);
    expect((await ingest()).status).toBe(404);
    expect(await api.store.getEndpoint(account.id, endpoint.id)).toBeNull();
    expect((await api.store.listDeliveries(account.id, { limit: 10 })).items).toEqual([]);
    expect((await platform('DELETE', `/internal/v1/accounts/${account.id}`)).status).toBe(404);
    expect((await platform('GET', `/internal/v1/accounts/${account.id}/keys`)).status).toBe(404);
    // Everyone else carries on.
    expect(await works(api.alice.apiKey)).toBe(200);
  });
});
