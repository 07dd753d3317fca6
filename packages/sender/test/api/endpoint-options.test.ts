/**
 * The management API's Standard Webhooks switch, rotation with a grace period and test deliveries
 * over HTTP against the real service (design D32, D38, D39, D42, D43).
 */
import { isStandardWebhooksSecret, sampleEventData, verifySignature } from '@linkhooks/protocol';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openApi } from '../../src/api/router.js';
import { type Api, startApi } from '../helpers/api-service.js';
import { type HttpsReceiver, startHttpsReceiver } from '../helpers/https-receiver.js';

let receiver: HttpsReceiver;
let api: Api;
let n = 0;
const HOUR = 60 * 60_000;
// A secret of the form generated before Standard Webhooks support: base64url, no padding.
const EARLIER_SECRET = `whsec_${'Ab-_'.repeat(10)}xyz`;

beforeAll(async () => {
  receiver = await startHttpsReceiver();
  api = await startApi(receiver.certs);
});
afterAll(async () => {
  await api.close();
  await receiver.close();
});
afterEach(() => {
  receiver.received.length = 0;
  receiver.hits.length = 0;
});

async function newEndpoint(extra: Record<string, unknown> = {}) {
  const name = `opt${n++}`;
  const res = await api.call('POST', '/v1/endpoints', {
    body: { url: `${receiver.origin}/hooks/${name}`, events: ['click'], ...extra },
  });
  expect(res.status).toBe(201);
  receiver.route(name, res.json.secret);
  return { name, endpoint: res.json };
}

describe('standard_webhooks', () => {
  it('is off by default, set at creation, shown everywhere, and changed with PATCH', async () => {
    const { endpoint: off } = await newEndpoint();
    const { endpoint: on } = await newEndpoint({ standard_webhooks: true });
    expect(off.standard_webhooks).toBe(false);
    expect(on.standard_webhooks).toBe(true);
    expect(isStandardWebhooksSecret(on.secret)).toBe(true);
    expect((await api.call('GET', `/v1/endpoints/${on.id}`)).json.standard_webhooks).toBe(true);
    const listed = (await api.call('GET', '/v1/endpoints')).json.data;
    expect(listed.find((e: { id: string }) => e.id === on.id).standard_webhooks).toBe(true);
    const patched = await api.call('PATCH', `/v1/endpoints/${off.id}`, { body: { standard_webhooks: true } });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({ standard_webhooks: true, url: off.url });
    const back = await api.call('PATCH', `/v1/endpoints/${off.id}`, { body: { standard_webhooks: false } });
    expect(back.json.standard_webhooks).toBe(false);
    const bad = await api.call('PATCH', `/v1/endpoints/${off.id}`, { body: { standard_webhooks: 'yes' } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toMatch(/standard_webhooks/);
  });

  it('is refused for a secret of the earlier form until the secret is rotated (design D43)', async () => {
    const { endpoint } = await newEndpoint();
    await api.store.updateEndpoint(
      api.alice.account.id,
      endpoint.id,
      { secret: EARLIER_SECRET },
      api.clock.now(),
    );
    const refused = await api.call('PATCH', `/v1/endpoints/${endpoint.id}`, {
      body: { standard_webhooks: true },
    });
    expect(refused.status).toBe(400);
    expect(refused.json.error.code).toBe('secret_rotation_required');
    expect(refused.json.error.message).toMatch(/rotate the secret/);
    expect(refused.json.error.message).not.toMatch(/design [RDIC]\d/);
    expect((await api.call('GET', `/v1/endpoints/${endpoint.id}`)).json.standard_webhooks).toBe(false);
    // The path for such an endpoint: rotate with a grace, then turn it on.
    const rotated = await api.call('POST', `/v1/endpoints/${endpoint.id}/secret/rotate`);
    expect(isStandardWebhooksSecret(rotated.json.secret)).toBe(true);
    const on = await api.call('PATCH', `/v1/endpoints/${endpoint.id}`, { body: { standard_webhooks: true } });
    expect(on.status).toBe(200);
    expect(on.json.standard_webhooks).toBe(true);
  });
});

describe('rotation with a grace period', () => {
  it('keeps the old secret signing X-Service-Signature for 24 hours by default, then the new one', async () => {
    const { name, endpoint } = await newEndpoint();
    const t0 = api.clock.now();
    const rotated = await api.call('POST', `/v1/endpoints/${endpoint.id}/secret/rotate`);
    expect(rotated.status).toBe(200);
    const expiry = new Date(t0 + 24 * HOUR).toISOString();
    expect(rotated.json.previous_secret_expires_at).toBe(expiry);
    expect(JSON.stringify(rotated.json)).not.toContain(endpoint.secret);
    expect((await api.call('GET', `/v1/endpoints/${endpoint.id}`)).json.previous_secret_expires_at).toBe(
      expiry,
    );
    expect((await api.call('GET', `/v1/endpoints/${endpoint.id}/secret`)).json).toEqual(rotated.json);

    const signatureAt = async () => {
      await api.call('POST', `/v1/endpoints/${endpoint.id}/test`);
      await api.sender.tick();
      const hit = receiver.hits.filter((h) => h.route === name).at(-1)!;
      return hit.headers['x-service-signature'] as string;
    };
    receiver.route(name, rotated.json.secret);
    // Within the grace, the receiver that still has only the old secret verifies.
    api.clock.advance(24 * HOUR - 1);
    const during = await signatureAt();
    const duringBody = await lastBody(endpoint.id);
    expect(verifySignature(duringBody, during, endpoint.secret).valid).toBe(true);
    expect(verifySignature(duringBody, during, [endpoint.secret, rotated.json.secret]).valid).toBe(true);
    api.clock.advance(1);
    const after = await signatureAt();
    const afterBody = await lastBody(endpoint.id);
    expect(verifySignature(afterBody, after, rotated.json.secret).valid).toBe(true);
    expect(verifySignature(afterBody, after, endpoint.secret).valid).toBe(false);
    expect(
      (await api.call('GET', `/v1/endpoints/${endpoint.id}`)).json.previous_secret_expires_at,
    ).toBeNull();
  });

  it('takes a grace of 0 to 7 days, and refuses anything else with a clear 400', async () => {
    const { endpoint } = await newEndpoint();
    const week = await api.call('POST', `/v1/endpoints/${endpoint.id}/secret/rotate`, {
      body: { grace_period_seconds: 604800 },
    });
    expect(week.json.previous_secret_expires_at).toBe(
      new Date(api.clock.now() + 7 * 24 * HOUR).toISOString(),
    );
    for (const bad of [-1, 604801, 1.5, '3600', null, 1e20]) {
      const res = await api.call('POST', `/v1/endpoints/${endpoint.id}/secret/rotate`, {
        body: { grace_period_seconds: bad },
      });
      expect(res.status, String(bad)).toBe(400);
      expect(res.json.error.code).toBe('invalid_request');
      expect(res.json.error.message).toMatch(/grace_period_seconds must be a whole number of seconds from 0/);
    }
    const unknown = await api.call('POST', `/v1/endpoints/${endpoint.id}/secret/rotate`, {
      body: { grace: 10 },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error.message).toMatch(/grace/);
    // None of the refused calls rotated anything.
    expect((await api.call('GET', `/v1/endpoints/${endpoint.id}/secret`)).json.secret).toBe(week.json.secret);
  });
});

describe('test deliveries', () => {
  it('carry X-Service-Test: 1 and are labelled test in the log; other deliveries are not', async () => {
    const { name, endpoint } = await newEndpoint();
    const test = await api.call('POST', `/v1/endpoints/${endpoint.id}/test`);
    expect(test.json.deliveries[0].test).toBe(true);
    await api.sender.tick();
    const hit = receiver.hits.find((h) => h.route === name)!;
    expect(hit.headers['x-service-test']).toBe('1');
    const log = await api.call('GET', `/v1/endpoints/${endpoint.id}/deliveries`);
    expect(log.json.data.map((d: { test: boolean }) => d.test)).toEqual([true]);
    const detail = await api.call('GET', `/v1/deliveries/${log.json.data[0].id}`);
    expect(detail.json.delivery.test).toBe(true);
    expect(detail.json.attempts[0].request_headers['x-service-test']).toBe('1');

    await api.sender.publish(api.alice.account.id, { event: 'click', data: sampleEventData('click') });
    await api.sender.tick();
    const plain = receiver.hits.filter((h) => h.route === name).at(-1)!;
    expect(plain.headers['x-service-test']).toBeUndefined();
    const both = await api.call('GET', `/v1/endpoints/${endpoint.id}/deliveries`);
    expect(both.json.data.map((d: { test: boolean }) => d.test).sort()).toEqual([false, true]);
  });
});

describe('OpenAPI', () => {
  it('describes the new fields and the rotation body', () => {
    const doc = openApi() as {
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    const schemas = doc.components.schemas;
    expect(Object.keys(schemas.Endpoint!.properties)).toEqual(
      expect.arrayContaining(['standard_webhooks', 'previous_secret_expires_at']),
    );
    expect(Object.keys(schemas.EndpointCreate!.properties)).toContain('standard_webhooks');
    expect(Object.keys(schemas.EndpointUpdate!.properties)).toContain('standard_webhooks');
    expect(Object.keys(schemas.EndpointSecret!.properties)).toContain('previous_secret_expires_at');
    expect(Object.keys(schemas.SecretRotate!.properties)).toEqual(['grace_period_seconds']);
    expect(Object.keys(schemas.Delivery!.properties)).toContain('test');
  });
});

/** The body of the endpoint's newest delivery, as every attempt sends it. */
async function lastBody(endpointId: string): Promise<string> {
  const log = await api.call('GET', `/v1/endpoints/${endpointId}/deliveries`);
  const detail = await api.call('GET', `/v1/deliveries/${log.json.data[0].id}`);
  return detail.json.request_body;
}
