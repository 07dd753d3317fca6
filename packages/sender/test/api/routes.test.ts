/**
 * Every management route over HTTP against the real service on a loopback port: its happy path
 * and its bad input (design D19).
 */
import { EVENT_NAMES, eventSchemas, verifySignature } from '@linkhooks/protocol';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES } from '../../src/api/router.js';
import { type Api, SERVICE_TOKEN, startApi } from '../helpers/api-service.js';
import { type HttpsReceiver, startHttpsReceiver } from '../helpers/https-receiver.js';

let receiver: HttpsReceiver;
let api: Api;
let n = 0;

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
});

/** Creates an endpoint on the real receiver and registers its secret there. */
async function newEndpoint(events: string[] = ['click', 'conversion'], key?: string) {
  const name = `api${n++}`;
  const res = await api.call('POST', '/v1/endpoints', {
    body: { url: `${receiver.origin}/hooks/${name}`, events, description: `endpoint ${name}` },
    ...(key ? { key } : {}),
  });
  expect(res.status).toBe(201);
  receiver.route(name, res.json.secret);
  return { name, endpoint: res.json };
}

const click = () => ({
  click_id: `clk_${n++}`,
  link_id: 7,
  link_slug: 'summer',
  destination_url: 'https://shop.example.com/',
  ip: '203.0.113.9',
  country: 'DE',
  region: 'Berlin',
  city: 'Berlin',
  device: 'mobile',
  browser: 'Firefox',
  os: 'Linux',
  referer: 'https://news.example.org/',
  is_unique: true,
  fraud_flags: [],
});

describe('authentication and plans', () => {
  it('answers 401 without a key or with a wrong one, on every account route', async () => {
    for (const route of API_ROUTES.filter((r) => r.auth === 'account')) {
      const path = route.path.replace(/:id/g, 'ep_missing');
      const none = await api.call(route.method.toUpperCase(), path, { key: null });
      expect(none.status, `${route.method} ${route.path}`).toBe(401);
      expect(none.json.error.code).toBe('unauthorized');
      const wrong = await api.call(route.method.toUpperCase(), path, { key: 'lhk_not_a_real_key' });
      expect(wrong.status).toBe(401);
    }
  });

  it('answers 403 plan_required to a Pro account on every webhook route (design R1)', async () => {
    for (const route of API_ROUTES.filter((r) => r.auth === 'account')) {
      const path = route.path.replace(/:id/g, 'ep_missing');
      const res = await api.call(route.method.toUpperCase(), path, {
        key: api.pro.apiKey,
        ...(route.method === 'get' ? {} : { body: {} }),
      });
      expect(res.status, `${route.method} ${route.path}`).toBe(403);
      expect(res.json.error.code).toBe('plan_required');
      expect(res.json.error.message).toMatch(/business/);
    }
  });

  it('takes the Bearer scheme case-insensitively and nothing else', async () => {
    const lower = await api.call('GET', '/v1/endpoints', {
      key: null,
      headers: { authorization: `bearer ${api.alice.apiKey}` },
    });
    expect(lower.status).toBe(200);
    const basic = await api.call('GET', '/v1/endpoints', {
      key: null,
      headers: { authorization: `Basic ${api.alice.apiKey}` },
    });
    expect(basic.status).toBe(401);
  });
});

describe('endpoints', () => {
  it('creates, lists, reads, updates and deletes, showing the secret only where asked', async () => {
    const { endpoint } = await newEndpoint(['click']);
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(endpoint).toMatchObject({
      events: ['click'],
      enabled: true,
      consecutive_failures: 0,
      disabled_reason: null,
      disabled_at: null,
    });

    const list = await api.call('GET', '/v1/endpoints');
    expect(list.status).toBe(200);
    const listed = list.json.data.find((e: { id: string }) => e.id === endpoint.id);
    expect(listed.url).toBe(endpoint.url);
    expect(list.text).not.toContain(endpoint.secret);

    const got = await api.call('GET', `/v1/endpoints/${endpoint.id}`);
    expect(got.json).not.toHaveProperty('secret');
    expect(got.json.id).toBe(endpoint.id);

    const patched = await api.call('PATCH', `/v1/endpoints/${endpoint.id}`, {
      body: { events: ['click', 'alert.triggered'], description: 'renamed' },
    });
    expect(patched.status).toBe(200);
    expect(patched.json.events).toEqual(['click', 'alert.triggered']);
    expect(patched.json.description).toBe('renamed');
    expect(patched.json).not.toHaveProperty('secret');

    const secret = await api.call('GET', `/v1/endpoints/${endpoint.id}/secret`);
    expect(secret.json).toEqual({ secret: endpoint.secret, previous_secret_expires_at: null });

    const deleted = await api.call('DELETE', `/v1/endpoints/${endpoint.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await api.call('GET', `/v1/endpoints/${endpoint.id}`)).status).toBe(404);
    expect((await api.call('DELETE', `/v1/endpoints/${endpoint.id}`)).status).toBe(404);
  });

  it('refuses bad endpoint input with a 400 that says what is wrong', async () => {
    const cases: [unknown, RegExp][] = [
      [{ events: ['click'] }, /url/],
      [{ url: `${receiver.origin}/x` }, /events/],
      [{ url: `${receiver.origin}/x`, events: [] }, /events/],
      [{ url: `${receiver.origin}/x`, events: ['clicks'] }, /events/],
      [{ url: 'http://example.com/hook', events: ['click'] }, /https/i],
      [{ url: 'not a url', events: ['click'] }, /url/i],
      [{ url: 'https://user:pw@example.com/hook', events: ['click'] }, /credential|user/i],
      [{ url: `${receiver.origin}/x#tenant-2`, events: ['click'] }, /#fragment: it is never sent.*#tenant-2/],
      [{ url: `${receiver.origin}/x`, events: ['click'], colour: 'red' }, /colour/],
      [{ url: 42, events: ['click'] }, /url/],
      [['an', 'array'], /body/],
    ];
    for (const [body, message] of cases) {
      const res = await api.call('POST', '/v1/endpoints', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error.message, JSON.stringify(body)).toMatch(message);
      expect(['invalid_request', 'invalid_endpoint', 'unsafe_url']).toContain(res.json.error.code);
    }
    const empty = await api.call('PATCH', '/v1/endpoints/ep_any', { body: {} });
    expect(empty.status).toBe(400);
  });

  it('refuses malformed JSON, a non-JSON body, a missing body and an oversized body', async () => {
    const broken = await api.call('POST', '/v1/endpoints', { raw: '{"url": ' });
    expect(broken.status).toBe(400);
    expect(broken.json.error.message).toMatch(/not valid JSON/);
    const text = await api.call('POST', '/v1/endpoints', {
      raw: 'url=https://x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(text.status).toBe(400);
    expect(text.json.error.message).toMatch(/Content-Type: application\/json/);
    const missing = await api.call('POST', '/v1/endpoints');
    expect(missing.status).toBe(400);
    expect(missing.json.error.message).toMatch(/needs a JSON body/);
    const huge = await api.call('POST', '/v1/endpoints', {
      body: { url: 'https://x.example', events: ['click'], description: 'x'.repeat(300_000) },
    });
    expect(huge.status).toBe(413);
    expect(huge.json.error.code).toBe('payload_too_large');
  });

  it('rotates the secret: without a grace, the next delivery is signed with the new one', async () => {
    const { name, endpoint } = await newEndpoint(['click']);
    const rotated = await api.call('POST', `/v1/endpoints/${endpoint.id}/secret/rotate`, {
      body: { grace_period_seconds: 0 },
    });
    expect(rotated.status).toBe(200);
    expect(rotated.json.secret).toMatch(/^whsec_/);
    expect(rotated.json.secret).not.toBe(endpoint.secret);
    expect(rotated.json.previous_secret_expires_at).toBeNull();
    receiver.route(name, rotated.json.secret);
    const test = await api.call('POST', `/v1/endpoints/${endpoint.id}/test`);
    expect(test.status).toBe(202);
    await api.sender.tick();
    const got = receiver.received.find((r) => r.route === name);
    expect(got).toBeDefined();
    const header = receiver.hits.find((h) => h.route === name)?.headers['x-service-signature'] as string;
    expect(verifySignature(got!.rawBody, header, rotated.json.secret).valid).toBe(true);
    expect(verifySignature(got!.rawBody, header, endpoint.secret).valid).toBe(false);
  });

  it('sends a signed, schema-valid test event of a subscribed type, logged like any delivery', async () => {
    const { name, endpoint } = await newEndpoint(['conversion', 'link.deleted']);
    const first = await api.call('POST', `/v1/endpoints/${endpoint.id}/test`);
    expect(first.status).toBe(202);
    expect(first.json.deliveries).toHaveLength(1);
    expect(first.json.deliveries[0]).toMatchObject({ endpoint_id: endpoint.id, event: 'conversion' });
    const chosen = await api.call('POST', `/v1/endpoints/${endpoint.id}/test`, {
      body: { event: 'link.deleted' },
    });
    expect(chosen.json.deliveries[0].event).toBe('link.deleted');
    await api.sender.tick();
    const got = receiver.received.filter((r) => r.route === name).map((r) => r.event);
    expect(got.map((e) => e.event).sort()).toEqual(['conversion', 'link.deleted']);
    for (const e of got) expect(eventSchemas[e.event as 'conversion'].safeParse(e).success).toBe(true);
    const log = await api.call('GET', `/v1/endpoints/${endpoint.id}/deliveries`);
    expect(log.json.data.map((d: { status: string }) => d.status)).toEqual(['delivered', 'delivered']);

    const unsubscribed = await api.call('POST', `/v1/endpoints/${endpoint.id}/test`, {
      body: { event: 'click' },
    });
    expect(unsubscribed.status).toBe(400);
    expect(unsubscribed.json.error.message).toMatch(/subscribes to: conversion, link.deleted/);
    const unknown = await api.call('POST', `/v1/endpoints/${endpoint.id}/test`, { body: { event: 'nope' } });
    expect(unknown.status).toBe(400);
  });

  it('re-enables a disabled endpoint: counter reset, held resumed, skipped replayed on request', async () => {
    const { name, endpoint } = await newEndpoint(['click']);
    receiver.behave(name, 'status500');
    // 10 deliveries that each fail all 6 attempts disable the endpoint (design D1).
    for (let i = 0; i < 10; i++) {
      await api.call('POST', '/internal/v1/events', {
        key: SERVICE_TOKEN,
        body: { account_id: api.alice.account.id, event: 'click', data: click() },
      });
    }
    for (let attempt = 0; attempt < 6; attempt++) {
      await api.sender.tick();
      api.clock.advance(9 * 60 * 60 * 1000);
    }
    const disabled = await api.call('GET', `/v1/endpoints/${endpoint.id}`);
    expect(disabled.json).toMatchObject({
      enabled: false,
      consecutive_failures: 10,
      disabled_reason: 'consecutive_failures',
    });
    expect(disabled.json.disabled_at).toMatch(/Z$/);
    const whileDisabled = await api.call('POST', '/internal/v1/events', {
      key: SERVICE_TOKEN,
      body: { account_id: api.alice.account.id, event: 'click', data: click() },
    });
    const mine = whileDisabled.json.deliveries.find(
      (d: { endpoint_id: string }) => d.endpoint_id === endpoint.id,
    );
    expect(mine.status).toBe('skipped');
    expect((await api.call('POST', `/v1/endpoints/${endpoint.id}/test`)).status).toBe(409);

    receiver.behave(name, 'ok');
    const enabled = await api.call('POST', `/v1/endpoints/${endpoint.id}/enable`, {
      body: { replay_skipped: true },
    });
    expect(enabled.status).toBe(200);
    expect(enabled.json.endpoint).toMatchObject({
      enabled: true,
      consecutive_failures: 0,
      disabled_reason: null,
    });
    expect(enabled.json.replayed).toBe(1);
    await api.sender.tick();
    expect(receiver.received.filter((r) => r.route === name)).toHaveLength(1);
    const bad = await api.call('POST', `/v1/endpoints/${endpoint.id}/enable`, {
      body: { replay_skipped: 'yes' },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toMatch(/replay_skipped/);
  });
});

describe('the delivery log', () => {
  it('pages with filters and a cursor, shows a delivery with its attempts, and retries it now', async () => {
    const { name, endpoint } = await newEndpoint(['click', 'conversion']);
    receiver.behave(name, 'status500');
    for (let i = 0; i < 5; i++) await api.sender.sendTestEvent(api.alice.account.id, endpoint.id, 'click');
    await api.sender.sendTestEvent(api.alice.account.id, endpoint.id, 'conversion');
    await api.sender.tick();

    const first = await api.call('GET', `/v1/endpoints/${endpoint.id}/deliveries?limit=4`);
    expect(first.status).toBe(200);
    expect(first.json.data).toHaveLength(4);
    expect(first.json.next_cursor).toEqual(expect.any(String));
    const second = await api.call(
      'GET',
      `/v1/endpoints/${endpoint.id}/deliveries?limit=4&cursor=${first.json.next_cursor}`,
    );
    expect(second.json.data).toHaveLength(2);
    expect(second.json.next_cursor).toBeNull();
    const ids = [...first.json.data, ...second.json.data].map((d: { id: string }) => d.id);
    expect(new Set(ids).size).toBe(6);

    const conversions = await api.call('GET', `/v1/endpoints/${endpoint.id}/deliveries?event=conversion`);
    expect(conversions.json.data).toHaveLength(1);
    const retrying = await api.call('GET', `/v1/deliveries?endpoint_id=${endpoint.id}&status=awaiting_retry`);
    expect(retrying.json.data).toHaveLength(6);
    expect(
      (await api.call('GET', `/v1/deliveries?status=delivered&endpoint_id=${endpoint.id}`)).json.data,
    ).toEqual([]);

    const id = conversions.json.data[0].id;
    const detail = await api.call('GET', `/v1/deliveries/${id}`);
    expect(detail.status).toBe(200);
    expect(detail.json.delivery).toMatchObject({
      id,
      status: 'awaiting_retry',
      attempts: 1,
      last_status_code: 500,
    });
    expect(JSON.parse(detail.json.request_body).event).toBe('conversion');
    expect(detail.json.attempts).toHaveLength(1);
    expect(detail.json.attempts[0]).toMatchObject({
      number: 1,
      status_code: 500,
      failure_kind: 'http_status',
    });
    expect(detail.json.attempts[0].request_headers['x-service-signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(detail.json.attempts[0].next_attempt_at).toMatch(/Z$/);

    receiver.behave(name, 'ok');
    const retried = await api.call('POST', `/v1/deliveries/${id}/retry`);
    expect(retried.status).toBe(202);
    await api.sender.tick();
    const after = await api.call('GET', `/v1/deliveries/${id}`);
    expect(after.json.delivery.status).toBe('delivered');
    expect(after.json.attempts.map((a: { number: number }) => a.number)).toEqual([1, 2]);
  });

  it('refuses bad filters with a 400 naming them', async () => {
    const { endpoint } = await newEndpoint();
    for (const query of [
      'status=lost',
      'event=clicks',
      'limit=0',
      'limit=101',
      'limit=ten',
      'colour=red',
      'limit=1&limit=2',
      'cursor=garbage',
      'cursor=acct_01JD8X3K9Q2W5E7R9T1Y3V5Z7P',
      'cursor=dlv_01JD8X3K9Q2W5E7R9T1Y3V5Z7P%27--',
    ]) {
      const res = await api.call('GET', `/v1/endpoints/${endpoint.id}/deliveries?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.json.error.code).toBe('invalid_request');
      expect(res.json.error.message).toMatch(/^query/);
    }
    expect((await api.call('GET', '/v1/deliveries/dlv_missing')).status).toBe(404);
    expect((await api.call('POST', '/v1/deliveries/dlv_missing/retry')).status).toBe(404);
    expect((await api.call('GET', '/v1/endpoints/ep_missing/deliveries')).status).toBe(404);
  });
});

describe('event types, ingest, metrics and unknown routes', () => {
  it('lists the six event types with their JSON Schemas', async () => {
    const res = await api.call('GET', '/v1/event-types');
    expect(res.json.data.map((t: { name: string }) => t.name)).toEqual([...EVENT_NAMES]);
    for (const t of res.json.data) {
      expect(t.description.length).toBeGreaterThan(5);
      expect(t.schema.properties.event.const ?? t.schema.properties.event.enum).toBeDefined();
    }
  });

  it('ingests with the service token only, validating the event', async () => {
    const { name } = await newEndpoint(['click']);
    const body = { account_id: api.alice.account.id, event: 'click', data: click() };
    expect((await api.call('POST', '/internal/v1/events', { key: null, body })).status).toBe(401);
    expect((await api.call('POST', '/internal/v1/events', { key: api.alice.apiKey, body })).status).toBe(401);
    const ok = await api.call('POST', '/internal/v1/events', { key: SERVICE_TOKEN, body });
    expect(ok.status).toBe(202);
    expect(ok.json.event_id).toMatch(/^evt_/);
    expect(ok.json.deliveries.length).toBeGreaterThanOrEqual(1);
    await api.sender.tick();
    expect(receiver.received.some((r) => r.route === name)).toBe(true);

    const invalid = await api.call('POST', '/internal/v1/events', {
      key: SERVICE_TOKEN,
      body: { ...body, data: { ...click(), link_id: 'seven' } },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.json.error.message).toMatch(/link_id/);
    const stamped = await api.call('POST', '/internal/v1/events', {
      key: SERVICE_TOKEN,
      body: { ...body, timestamp: '2026-11-22T10:00:00.123Z' },
    });
    expect(stamped.status).toBe(400);
    expect(stamped.json.error.message).toMatch(/timestamp/);
    const nobody = await api.call('POST', '/internal/v1/events', {
      key: SERVICE_TOKEN,
      body: { ...body, account_id: 'acct_nobody' },
    });
    expect(nobody.status).toBe(404);
    const pro = await api.call('POST', '/internal/v1/events', {
      key: SERVICE_TOKEN,
      body: { ...body, account_id: api.pro.account.id },
    });
    expect(pro.status).toBe(403);
    expect(pro.json.error.code).toBe('plan_required');
  });

  it('serves Prometheus metrics and JSON 404s', async () => {
    const metrics = await api.call('GET', '/metrics', { key: null });
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toMatch(/text\/plain/);
    expect(metrics.text).toMatch(/linkhooks_attempts_total/);
    expect(metrics.text).toMatch(/linkhooks_queue_depth/);
    const missing = await api.call('GET', '/v1/nothing-here');
    expect(missing.status).toBe(404);
    expect(missing.json.error).toMatchObject({
      code: 'route_not_found',
      message: 'no route GET /v1/nothing-here',
    });
    // A known path asked with a method it does not take says which it takes.
    const put = await api.call('PUT', '/v1/endpoints', { body: {} });
    expect([put.status, put.headers.get('allow')]).toEqual([405, 'GET, HEAD, POST']);
    expect(put.json.error).toEqual({
      code: 'method_not_allowed',
      message: '/v1/endpoints takes GET or POST, not PUT',
    });
    const post = await api.call('POST', '/v1/endpoints/ep_123', { body: {} });
    expect(post.json.error.message).toBe('/v1/endpoints/ep_123 takes GET, PATCH, or DELETE, not POST');
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD, PATCH, DELETE']);
    const ingest = await api.call('GET', '/internal/v1/events', { key: null });
    expect([ingest.status, ingest.json.error.message]).toEqual([
      405,
      '/internal/v1/events takes POST, not GET',
    ]);
    const scrape = await api.call('POST', '/metrics', { key: null, body: {} });
    expect([scrape.status, scrape.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    const options = await api.call('OPTIONS', '/v1/endpoints/ep_123', { key: null });
    expect([options.status, options.headers.get('allow')]).toEqual([204, 'GET, HEAD, PATCH, DELETE']);
    // One segment stands for an id: a path one deeper is still unknown.
    expect((await api.call('PUT', '/v1/endpoints/ep_123/nothing')).status).toBe(404);
  });
});

describe('ingest without a configured service token', () => {
  it('answers 503 ingest_disabled', async () => {
    const { createServiceApp } = await import('../../src/api/service-app.js');
    const app = createServiceApp({ sender: api.sender });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    const res = await fetch(`http://127.0.0.1:${port}/internal/v1/events`, {
      method: 'POST',
      headers: { authorization: 'Bearer anything', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(503);
    expect((await res.json()).error.code).toBe('ingest_disabled');
    await new Promise((resolve) => server.close(resolve));
  });
});
