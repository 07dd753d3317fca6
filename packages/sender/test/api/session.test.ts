/**
 * Dashboard sessions over HTTP: the API key is exchanged for an HttpOnly, SameSite=Strict cookie;
 * the cookie then signs requests in; a state-changing request by cookie needs the CSRF header;
 * signing out ends the session.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSessionStore } from '../../src/api/sessions.js';
import { type Api, startApi } from '../helpers/api-service.js';
import { createTestCertificates } from '../helpers/test-ca.mjs';

let api: Api;
beforeAll(async () => {
  api = await startApi(createTestCertificates());
});
afterAll(() => api.close());

const CSRF = { 'x-linkhooks-csrf': '1' };

async function signIn(key: string) {
  const res = await api.call('POST', '/v1/session', { key: null, body: { api_key: key }, headers: CSRF });
  const cookie = res.headers.get('set-cookie') ?? '';
  return { res, cookie: cookie.split(';')[0]!, raw: cookie };
}

describe('dashboard sessions', () => {
  it('sets an HttpOnly, SameSite=Strict cookie that signs later requests in', async () => {
    const { res, cookie, raw } = await signIn(api.alice.apiKey);
    expect(res.status).toBe(201);
    expect(res.json.account).toMatchObject({ id: api.alice.account.id, plan: 'business' });
    expect(raw).toMatch(
      /^linkhooks_session=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/; Max-Age=\d+$/,
    );
    expect(raw).not.toContain(api.alice.apiKey);
    const me = await api.call('GET', '/v1/session', { key: null, headers: { cookie } });
    expect(me.json.account.id).toBe(api.alice.account.id);
    const list = await api.call('GET', '/v1/endpoints', { key: null, headers: { cookie } });
    expect(list.status).toBe(200);
  });

  it('refuses a sign-in without the CSRF header, saying which header', async () => {
    const res = await api.call('POST', '/v1/session', { key: null, body: { api_key: api.alice.apiKey } });
    expect(res.status).toBe(403);
    expect(res.json.error).toMatchObject({ code: 'csrf_check_failed' });
    expect(res.json.error.message).toMatch(/"X-Linkhooks-CSRF: 1" with the sign-in/);
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('refuses a state change by cookie without the CSRF header, and allows it with', async () => {
    const { cookie } = await signIn(api.alice.apiKey);
    const body = { url: 'https://127.0.0.1:9/hook', events: ['click'] };
    const forged = await api.call('POST', '/v1/endpoints', { key: null, body, headers: { cookie } });
    expect(forged.status).toBe(403);
    expect(forged.json.error.code).toBe('csrf_check_failed');
    const ok = await api.call('POST', '/v1/endpoints', { key: null, body, headers: { cookie, ...CSRF } });
    expect(ok.status).toBe(201);
  });

  it('refuses a state change by cookie without the CSRF header whatever other Authorization it carries', async () => {
    const { cookie } = await signIn(api.alice.apiKey);
    const body = { url: 'https://127.0.0.1:9/hook', events: ['click'] };
    for (const authorization of ['Basic YWxpY2U6c2VjcmV0', 'Digest username="alice"', 'Bearer']) {
      const forged = await api.call('POST', '/v1/endpoints', {
        key: null,
        body,
        headers: { cookie, authorization },
      });
      expect(forged.status, authorization).toBe(403);
      expect(forged.json.error.code).toBe('csrf_check_failed');
    }
    const out = await api.call('DELETE', '/v1/session', {
      key: null,
      headers: { cookie, authorization: 'Basic YWxpY2U6c2VjcmV0' },
    });
    expect(out.status).toBe(403);
    // A Bearer key, in any case, decides who is calling and needs no CSRF header.
    const byKey = await api.call('POST', '/v1/endpoints', {
      key: null,
      body,
      headers: { cookie, authorization: `bearer ${api.alice.apiKey}` },
    });
    expect(byKey.status).toBe(201);
  });

  it('refuses a wrong key, a plan without webhooks and a sign-in without the CSRF header', async () => {
    expect((await signIn('lhk_wrong')).res.status).toBe(401);
    const pro = await signIn(api.pro.apiKey);
    expect(pro.res.status).toBe(403);
    expect(pro.raw).toBe('');
    const noHeader = await api.call('POST', '/v1/session', {
      key: null,
      body: { api_key: api.alice.apiKey },
    });
    expect(noHeader.status).toBe(403);
  });

  it('says a session cookie it does not know has ended, rather than asking for a key', async () => {
    const res = await api.call('GET', '/v1/endpoints', {
      key: null,
      headers: { cookie: `linkhooks_session=${'x'.repeat(43)}` },
    });
    expect(res.status).toBe(401);
    expect(res.json.error.message).toBe('the session has ended; sign in again');
    const none = await api.call('GET', '/v1/endpoints', { key: null });
    expect(none.json.error.message).toMatch(/^send your API key as/);
  });

  it('signs out: the cookie is cleared and the session no longer works', async () => {
    const { cookie } = await signIn(api.bob.apiKey);
    const out = await api.call('DELETE', '/v1/session', { key: null, headers: { cookie, ...CSRF } });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/Max-Age=0/);
    expect((await api.call('GET', '/v1/session', { key: null, headers: { cookie } })).status).toBe(401);
  });

  it('never lets a session reach another account', async () => {
    const { cookie } = await signIn(api.bob.apiKey);
    const alices = await api.call('GET', '/v1/endpoints');
    const id = alices.json.data[0]?.id;
    expect(id).toBeDefined();
    expect((await api.call('GET', `/v1/endpoints/${id}`, { key: null, headers: { cookie } })).status).toBe(
      404,
    );
  });
});

describe('sessions per account', () => {
  let capped: Api;
  beforeAll(async () => {
    capped = await startApi(
      createTestCertificates(),
      {},
      { sessions: createSessionStore({ perAccount: 3 }) },
    );
  });
  afterAll(() => capped.close());

  it('a new sign-in past the cap ends the account’s oldest session, not another account’s', async () => {
    const signInTo = async (key: string) => {
      const res = await capped.call('POST', '/v1/session', {
        key: null,
        body: { api_key: key },
        headers: CSRF,
      });
      expect(res.status).toBe(201);
      return res.headers.get('set-cookie')!.split(';')[0]!;
    };
    const bobs = await signInTo(capped.bob.apiKey);
    const alices = [];
    for (let i = 0; i < 5; i++) alices.push(await signInTo(capped.alice.apiKey));
    const status = async (cookie: string) =>
      (await capped.call('GET', '/v1/session', { key: null, headers: { cookie } })).status;
    expect(await Promise.all(alices.map(status))).toEqual([401, 401, 200, 200, 200]);
    expect(await status(bobs)).toBe(200);
  });
});
