/**
 * Tenant isolation over HTTP: for every route that names an endpoint or a delivery, another
 * account gets 404 — the same answer as for an id that does not exist — and no list shows
 * another account's data.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES } from '../../src/api/router.js';
import { type Api, startApi } from '../helpers/api-service.js';
import { addEndpoint } from '../helpers/endpoints.js';
import { type HttpsReceiver, startHttpsReceiver } from '../helpers/https-receiver.js';

let receiver: HttpsReceiver;
let api: Api;
let aliceEndpoint: string;
let aliceDelivery: string;
let aliceSecret: string;

beforeAll(async () => {
  receiver = await startHttpsReceiver();
  api = await startApi(receiver.certs);
  const { endpoint } = await addEndpoint(api.sender, receiver, {
    account: api.alice.account.id,
    route: 'alice',
    events: ['click', 'conversion'],
  });
  aliceEndpoint = endpoint.id;
  aliceSecret = endpoint.secret;
  const test = await api.call('POST', `/v1/endpoints/${aliceEndpoint}/test`);
  aliceDelivery = test.json.deliveries[0].id;
  await api.sender.tick();
});
afterAll(async () => {
  await api.close();
  await receiver.close();
});

const idRoutes = API_ROUTES.filter((r) => r.auth === 'account' && r.path.includes(':id'));

describe('tenant isolation', () => {
  it('covers every route that takes an id', () => {
    expect(idRoutes.map((r) => `${r.method} ${r.path}`).sort()).toEqual(
      [
        'delete /v1/endpoints/:id',
        'get /v1/deliveries/:id',
        'get /v1/endpoints/:id',
        'get /v1/endpoints/:id/deliveries',
        'get /v1/endpoints/:id/secret',
        'get /v1/endpoints/:id/stats',
        'patch /v1/endpoints/:id',
        'post /v1/deliveries/:id/retry',
        'post /v1/endpoints/:id/enable',
        'post /v1/endpoints/:id/pause',
        'post /v1/endpoints/:id/recover',
        'post /v1/endpoints/:id/resume',
        'post /v1/endpoints/:id/secret/rotate',
        'post /v1/endpoints/:id/test',
      ].sort(),
    );
  });

  it.each(idRoutes.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r] as const))(
    '%s: another account gets 404, exactly as for a missing id',
    async (_label, route) => {
      const id = route.path.startsWith('/v1/deliveries') ? aliceDelivery : aliceEndpoint;
      const body =
        route.method === 'patch'
          ? { description: 'taken over' }
          : route.path.endsWith('/recover')
            ? { since: '2026-11-01T00:00:00Z' }
            : route.body
              ? {}
              : undefined;
      const asBob = await api.call(route.method.toUpperCase(), route.path.replace(':id', id), {
        key: api.bob.apiKey,
        ...(body ? { body } : {}),
      });
      const missing = await api.call(route.method.toUpperCase(), route.path.replace(':id', `${id}x`), {
        key: api.bob.apiKey,
        ...(body ? { body } : {}),
      });
      expect(asBob.status).toBe(404);
      expect(asBob.json.error.code).toBe('not_found');
      expect(missing.status).toBe(404);
      expect(asBob.text).not.toContain(aliceSecret);
    },
  );

  it('leaves Alice’s endpoint and delivery untouched by Bob’s attempts', async () => {
    const endpoint = await api.call('GET', `/v1/endpoints/${aliceEndpoint}`);
    expect(endpoint.status).toBe(200);
    expect(endpoint.json.description).toBeNull();
    expect(endpoint.json).toMatchObject({ paused: false, status: 'active' });
    expect((await api.call('GET', `/v1/endpoints/${aliceEndpoint}/secret`)).json.secret).toBe(aliceSecret);
    expect((await api.call('GET', `/v1/deliveries/${aliceDelivery}`)).json.delivery.status).toBe('delivered');
  });

  it('shows no list entry of another account', async () => {
    const { endpoint: bobs } = await addEndpoint(api.sender, receiver, {
      account: api.bob.account.id,
      route: 'bob',
    });
    await api.call('POST', `/v1/endpoints/${bobs.id}/test`, { key: api.bob.apiKey });
    for (const path of ['/v1/endpoints', '/v1/deliveries']) {
      const res = await api.call('GET', path, { key: api.bob.apiKey });
      expect(res.status).toBe(200);
      expect(res.text).not.toContain(aliceEndpoint);
      expect(res.text).not.toContain(aliceDelivery);
    }
    // Alice's endpoint as Bob's filter is a 404 in the words of one that does not exist, filtered
    // by event too; his own endpoint's page holds his.
    const missing = await api.call('GET', '/v1/deliveries?endpoint_id=ep_nothing', { key: api.bob.apiKey });
    expect(missing.status).toBe(404);
    for (const query of [`endpoint_id=${aliceEndpoint}`, `endpoint_id=${aliceEndpoint}&event=click`]) {
      const byHers = await api.call('GET', `/v1/deliveries?${query}`, { key: api.bob.apiKey });
      expect(byHers.status).toBe(404);
      expect(byHers.json.error.message).toBe(missing.json.error.message.replace('ep_nothing', aliceEndpoint));
      expect(byHers.text).not.toContain(aliceDelivery);
    }
    const byHis = await api.call('GET', `/v1/deliveries?endpoint_id=${bobs.id}`, { key: api.bob.apiKey });
    expect(byHis.json.data).toHaveLength(1);
    const alices = await api.call('GET', '/v1/endpoints');
    expect(alices.text).not.toContain(bobs.id);
    // A search names another account's event, its click, or an id both accounts use (design D47).
    const detail = await api.call('GET', `/v1/deliveries/${aliceDelivery}`);
    const clickId = JSON.parse(detail.json.request_body).data.click_id as string;
    await api.sender.publish(api.bob.account.id, {
      event: 'click',
      data: { ...JSON.parse(detail.json.request_body).data },
    });
    for (const q of [detail.json.delivery.event_id, clickId]) {
      const path = `/v1/deliveries?q=${encodeURIComponent(q)}`;
      const asBob = await api.call('GET', path, { key: api.bob.apiKey });
      expect(asBob.status).toBe(200);
      expect(asBob.text).not.toContain(aliceDelivery);
      expect(asBob.text).not.toContain(aliceEndpoint);
      expect((await api.call('GET', path)).json.data.map((d: { id: string }) => d.id)).toEqual([
        aliceDelivery,
      ]);
    }
    const bobsClick = await api.call('GET', `/v1/deliveries?q=${clickId}`, { key: api.bob.apiKey });
    expect(bobsClick.json.data.map((d: { endpoint_id: string }) => d.endpoint_id)).toEqual([bobs.id]);
    const bobList = await api.call('GET', '/v1/endpoints', { key: api.bob.apiKey });
    expect(bobList.json.data.map((e: { id: string }) => e.id)).toEqual([bobs.id]);
  });
});
