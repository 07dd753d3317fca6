/**
 * Pausing, resuming and recovering an endpoint over HTTP against the real service (design D34,
 * D35): what a paused endpoint holds reaches the receiver only after the resume, nothing is
 * counted against it; recovery re-queues failed deliveries in a range, answers how many remain,
 * refuses bad input with a plain message and is limited per account.
 */
import { sampleEventData } from '@linkhooks/protocol';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Api, SERVICE_TOKEN, startApi } from '../helpers/api-service.js';
import { addEndpoint } from '../helpers/endpoints.js';
import { type HttpsReceiver, startHttpsReceiver } from '../helpers/https-receiver.js';

let receiver: HttpsReceiver;
let api: Api;
let n = 0;

beforeAll(async () => {
  receiver = await startHttpsReceiver();
  // No retries: one failed attempt makes a delivery failed, what recovery is for.
  api = await startApi(receiver.certs, { retryDelaysMs: [], quotas: { recoveriesPerMinute: 5 } });
});
afterAll(async () => {
  await api.close();
  await receiver.close();
});
afterEach(() => {
  receiver.received.length = 0;
});

const click = () => ({ ...sampleEventData('click'), click_id: `clk_${n++}` });

const ingest = (account = api.alice.account.id) =>
  api.call('POST', '/internal/v1/events', {
    key: SERVICE_TOKEN,
    body: { account_id: account, event: 'click', data: click() },
  });

async function newEndpoint() {
  return addEndpoint(api.sender, receiver, { account: api.alice.account.id });
}

describe('pause and resume', () => {
  it('holds deliveries while paused, new ones included, and delivers them on resume', async () => {
    const { route, endpoint } = await newEndpoint();
    const paused = await api.call('POST', `/v1/endpoints/${endpoint.id}/pause`);
    expect(paused.status).toBe(200);
    expect(paused.json).toMatchObject({ id: endpoint.id, paused: true, status: 'paused', enabled: true });
    expect(paused.json.paused_at).toBe(new Date(api.clock.now()).toISOString());

    const stored = await ingest();
    expect(stored.status).toBe(202);
    const delivery = stored.json.deliveries.find(
      (d: { endpoint_id: string }) => d.endpoint_id === endpoint.id,
    );
    expect(delivery.status).toBe('held');
    api.clock.advance(60_000);
    await api.sender.tick();
    expect(receiver.received.filter((r) => r.route === route)).toEqual([]);

    const shown = await api.call('GET', `/v1/endpoints/${endpoint.id}`);
    expect(shown.json).toMatchObject({ paused: true, status: 'paused', consecutive_failures: 0 });
    expect((await api.call('POST', `/v1/endpoints/${endpoint.id}/test`)).json.error.code).toBe(
      'endpoint_paused',
    );
    const retry = await api.call('POST', `/v1/deliveries/${delivery.id}/retry`);
    expect(retry.status).toBe(409);
    expect(retry.json.error.message).toBe('the endpoint is paused; resume it first');

    const resumed = await api.call('POST', `/v1/endpoints/${endpoint.id}/resume`);
    expect(resumed.status).toBe(200);
    expect(resumed.json).toMatchObject({ paused: false, paused_at: null, status: 'active' });
    await api.sender.tick();
    expect(receiver.received.filter((r) => r.route === route)).toHaveLength(1);
    expect((await api.call('GET', `/v1/deliveries/${delivery.id}`)).json.delivery.status).toBe('delivered');
  });

  it('answers 404 for an endpoint that does not exist, and pausing twice is harmless', async () => {
    expect((await api.call('POST', '/v1/endpoints/ep_missing/pause')).status).toBe(404);
    expect((await api.call('POST', '/v1/endpoints/ep_missing/resume')).status).toBe(404);
    const { endpoint } = await newEndpoint();
    await api.call('POST', `/v1/endpoints/${endpoint.id}/pause`);
    const again = await api.call('POST', `/v1/endpoints/${endpoint.id}/pause`);
    expect(again.status).toBe(200);
    expect(again.json.paused).toBe(true);
    expect(again.json.paused_at).toBe(new Date(api.clock.now()).toISOString());
  });
});

describe('recover', () => {
  /** An endpoint with `count` failed deliveries (its receiver answered 500), the receiver fixed since. */
  async function failedEndpoint(count: number) {
    const { route, endpoint } = await newEndpoint();
    receiver.behave(route, 'status500');
    for (let i = 0; i < count; i++) await ingest();
    await api.sender.tick();
    receiver.behave(route, 'ok');
    receiver.received.length = 0;
    return { route, endpoint };
  }

  it('re-queues the failed deliveries in the range for one more attempt, and they are delivered', async () => {
    const since = new Date(api.clock.now()).toISOString();
    const { route, endpoint } = await failedEndpoint(3);
    const failed = await api.call('GET', `/v1/endpoints/${endpoint.id}/deliveries?status=failed`);
    expect(failed.json.data).toHaveLength(3);
    api.clock.advance(1_000);
    const res = await api.call('POST', `/v1/endpoints/${endpoint.id}/recover`, { body: { since } });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ recovered: 3, remaining: 0 });
    await api.sender.tick();
    expect(receiver.received.filter((r) => r.route === route)).toHaveLength(3);
    const again = await api.call('POST', `/v1/endpoints/${endpoint.id}/recover`, { body: { since } });
    expect(again.json).toEqual({ recovered: 0, remaining: 0 });
  });

  it('leaves failed deliveries outside the range alone', async () => {
    const { route, endpoint } = await failedEndpoint(1);
    api.clock.advance(10_000);
    const until = new Date(api.clock.now()).toISOString();
    api.clock.advance(10_000);
    const res = await api.call('POST', `/v1/endpoints/${endpoint.id}/recover`, {
      body: { since: until, until: new Date(api.clock.now()).toISOString() },
    });
    expect(res.json).toEqual({ recovered: 0, remaining: 0 });
    await api.sender.tick();
    expect(receiver.received.filter((r) => r.route === route)).toEqual([]);
  });

  it('refuses bad input with a message saying what is wrong', async () => {
    const { endpoint } = await newEndpoint();
    const path = `/v1/endpoints/${endpoint.id}/recover`;
    const now = api.clock.now();
    const cases: Array<[unknown, RegExp]> = [
      [undefined, /needs a JSON body/],
      [{}, /since/],
      [{ since: 'yesterday' }, /since/],
      [{ since: '2026-11-22' }, /since/],
      [{ since: 1_700_000_000 }, /since/],
      [{ since: new Date(now).toISOString(), until: 'later' }, /until/],
      [
        { since: new Date(now).toISOString(), until: new Date(now - 1000).toISOString() },
        /since must be before until/,
      ],
      [
        { since: new Date(now + 60_000).toISOString(), until: new Date(now + 120_000).toISOString() },
        /future/,
      ],
      // No until given: the message names the since the caller sent, not an until they did not.
      [{ since: new Date(now + 60_000).toISOString() }, /^since must not be in the future$/],
      [{ since: new Date(now).toISOString(), limit: 5 }, /limit/],
    ];
    for (const [body, message] of cases) {
      const res = await api.call('POST', path, body === undefined ? {} : { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error.message, JSON.stringify(body)).toMatch(message);
    }
  });

  it('answers 409 for a paused or disabled endpoint', async () => {
    const { endpoint } = await failedEndpoint(1);
    const body = { since: new Date(api.clock.now() - 60_000).toISOString() };
    await api.call('POST', `/v1/endpoints/${endpoint.id}/pause`);
    const paused = await api.call('POST', `/v1/endpoints/${endpoint.id}/recover`, { body });
    expect(paused.status).toBe(409);
    expect(paused.json.error).toMatchObject({
      code: 'endpoint_paused',
      message: 'the endpoint is paused; resume it first',
    });

    // Ten failed deliveries in a row disable an endpoint.
    const failing = await failedEndpoint(10);
    const shown = await api.call('GET', `/v1/endpoints/${failing.endpoint.id}`);
    expect(shown.json).toMatchObject({ enabled: false, status: 'disabled' });
    const disabled = await api.call('POST', `/v1/endpoints/${failing.endpoint.id}/recover`, { body });
    expect(disabled.status).toBe(409);
    expect(disabled.json.error.code).toBe('endpoint_disabled');
  });

  it('answers 429 with Retry-After past the account’s recoveries a minute, for that account only', async () => {
    api.clock.advance(120_000); // a full allowance
    const { endpoint } = await newEndpoint();
    const body = { since: new Date(api.clock.now() - 1_000).toISOString() };
    const path = `/v1/endpoints/${endpoint.id}/recover`;
    for (let i = 0; i < 5; i++) expect((await api.call('POST', path, { body })).status).toBe(200);
    const limited = await api.call('POST', path, { body });
    expect(limited.status).toBe(429);
    expect(limited.json.error.code).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    const bobs = await addEndpoint(api.sender, receiver, { account: api.bob.account.id });
    const asBob = await api.call('POST', `/v1/endpoints/${bobs.endpoint.id}/recover`, {
      key: api.bob.apiKey,
      body,
    });
    expect(asBob.status).toBe(200);
    api.clock.advance(60_000);
    expect((await api.call('POST', path, { body })).status).toBe(200);
  });

  it('counts no recovery for a call refused as 404 or 409', async () => {
    api.clock.advance(120_000); // a full allowance
    const { endpoint } = await newEndpoint();
    const body = { since: new Date(api.clock.now() - 1_000).toISOString() };
    const path = `/v1/endpoints/${endpoint.id}/recover`;
    await api.call('POST', `/v1/endpoints/${endpoint.id}/pause`);
    for (let i = 0; i < 6; i++) expect((await api.call('POST', path, { body })).status).toBe(409);
    for (let i = 0; i < 6; i++)
      expect((await api.call('POST', '/v1/endpoints/ep_missing/recover', { body })).status).toBe(404);
    await api.call('POST', `/v1/endpoints/${endpoint.id}/resume`);
    for (let i = 0; i < 5; i++) expect((await api.call('POST', path, { body })).status).toBe(200);
    expect((await api.call('POST', path, { body })).status).toBe(429);
  });
});

describe('the library', () => {
  it('answers pause and resume with the endpoint’s secret in clear, secrets encrypted at rest', async () => {
    const { randomBytes } = await import('node:crypto');
    const { createSender } = await import('../../src/engine/sender.js');
    const { createMemoryStore } = await import('../../src/store/memory-store.js');
    const sender = createSender({
      store: createMemoryStore(),
      masterKey: randomBytes(32).toString('base64'),
      allowPrivateNetworks: true,
    });
    try {
      const endpoint = await sender.createEndpoint('acct_lib', {
        url: 'https://127.0.0.1/hook',
        events: ['click'],
      });
      expect((await sender.pauseEndpoint('acct_lib', endpoint.id)).secret).toBe(endpoint.secret);
      expect((await sender.resumeEndpoint('acct_lib', endpoint.id)).endpoint.secret).toBe(endpoint.secret);
    } finally {
      await sender.stop(0);
    }
  });
});
