/**
 * What every answer of the service carries (design D28): `nosniff` everywhere, errors and 404s
 * included; `no-store` on the API; `Secure` cookies and HSTS only when TLS carried the request,
 * which `X-Forwarded-Proto` says only with `trustProxy`; a malformed URL answers 400.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, SERVICE_TOKEN, startApi } from '../helpers/api-service.js';
import { createTestCertificates } from '../helpers/test-ca.mjs';

const certs = createTestCertificates();
const CSRF = { 'x-linkhooks-csrf': '1' };
const FORWARDED_HTTPS = { 'x-forwarded-proto': 'https' };

let api: Api;
let behindProxy: Api;
let forcedHsts: Api;
beforeAll(async () => {
  [api, behindProxy, forcedHsts] = await Promise.all([
    startApi(certs),
    startApi(certs, {}, { trustProxy: true }),
    startApi(certs, {}, { hsts: true }),
  ]);
});
afterAll(() => Promise.all([api, behindProxy, forcedHsts].map((a) => a?.close())));

async function signIn(on: Api, headers: Record<string, string> = {}) {
  return on.call('POST', '/v1/session', {
    key: null,
    body: { api_key: on.alice.apiKey },
    headers: { ...CSRF, ...headers },
  });
}

describe('nosniff on every answer', () => {
  it.each([
    ['an error answer (401)', 'GET', '/v1/endpoints', null, 401],
    ['a 404 under /v1', 'GET', '/v1/nothing-here', undefined, 404],
    ['a 404 outside the API', 'GET', '/nothing-here', null, 404],
    ['the health check', 'GET', '/healthz', null, 200],
    ['the dashboard', 'GET', '/dashboard', null, 200],
    ['the metrics', 'GET', '/metrics', null, 200],
    ['the OpenAPI document', 'GET', '/v1/openapi.json', null, 200],
    ['an ingest refusal', 'POST', '/internal/v1/events', 'wrong-token', 401],
    ['an ingest answer', 'POST', '/internal/v1/events/batch', SERVICE_TOKEN, 400],
  ] as const)('%s', async (_what, method, path, key, status) => {
    const res = await api.call(method, path, { key, ...(method === 'POST' ? { body: {} } : {}) });
    expect(res.status).toBe(status);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

describe('no-store on the API', () => {
  it('on an endpoint create answer, which shows the secret', async () => {
    const res = await api.call('POST', '/v1/endpoints', {
      body: { url: 'https://127.0.0.1:9/hook', events: ['click'] },
    });
    expect(res.status).toBe(201);
    expect(res.json.secret).toMatch(/^whsec_/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const secret = await api.call('GET', `/v1/endpoints/${res.json.id}/secret`);
    expect(secret.headers.get('cache-control')).toBe('no-store');
  });

  it('on sign-in, the session read and errors; not on the dashboard or the health check', async () => {
    const signedIn = await signIn(api);
    expect(signedIn.status).toBe(201);
    expect(signedIn.headers.get('cache-control')).toBe('no-store');
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
    const read = await api.call('GET', '/v1/session', { key: null, headers: { cookie } });
    expect(read.headers.get('cache-control')).toBe('no-store');
    expect((await api.call('GET', '/v1/endpoints', { key: null })).headers.get('cache-control')).toBe(
      'no-store',
    );
    expect((await api.call('GET', '/healthz')).headers.get('cache-control')).toBeNull();
  });
});

describe('TLS behind a proxy', () => {
  it('with trustProxy, X-Forwarded-Proto: https gives a Secure cookie and HSTS', async () => {
    const res = await signIn(behindProxy, FORWARDED_HTTPS);
    expect(res.status).toBe(201);
    expect(res.headers.get('set-cookie')).toMatch(/; Secure$/);
    expect(res.headers.get('strict-transport-security')).toBe('max-age=31536000');
    const health = await behindProxy.call('GET', '/healthz', { headers: FORWARDED_HTTPS });
    expect(health.headers.get('strict-transport-security')).toBe('max-age=31536000');
  });

  it('with trustProxy, a request the proxy got over plain HTTP gets neither', async () => {
    const res = await signIn(behindProxy, { 'x-forwarded-proto': 'http' });
    expect(res.status).toBe(201);
    expect(res.headers.get('set-cookie')).not.toContain('Secure');
    expect(res.headers.get('strict-transport-security')).toBeNull();
  });

  it('without trustProxy, a forged X-Forwarded-Proto changes nothing', async () => {
    const res = await signIn(api, FORWARDED_HTTPS);
    expect(res.status).toBe(201);
    expect(res.headers.get('set-cookie')).not.toContain('Secure');
    expect(res.headers.get('strict-transport-security')).toBeNull();
  });

  it('hsts forces the header on every answer', async () => {
    for (const path of ['/healthz', '/v1/endpoints', '/dashboard']) {
      const res = await forcedHsts.call('GET', path);
      expect(res.headers.get('strict-transport-security'), path).toBe('max-age=31536000');
    }
  });
});

describe('a malformed URL', () => {
  it.each(['/v1/endpoints/%E0%A4%A', '/v1/deliveries/%', '/dashboard/%', '/%zz', '/internal/v1/%FF'])(
    '%s answers 400 with the error body, before any credential',
    async (path) => {
      const res = await api.call('GET', path, { key: null });
      expect(res.status).toBe(400);
      expect(res.json.error).toEqual({
        code: 'invalid_request',
        message: 'the URL has a malformed "%" escape',
      });
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('cache-control')).toBe('no-store');
    },
  );
});
