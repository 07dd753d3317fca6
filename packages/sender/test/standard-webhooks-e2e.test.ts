/**
 * The sender's deliveries as receivers see them over real HTTPS, in virtual time: the Standard
 * Webhooks form verified by the reference `standardwebhooks` library and by `svix` with the secret
 * exactly as the API returns it (design D32), a rotation with traffic flowing through its grace
 * (design D38, D39), and what a receiver's 429, 503 and 410 ask (design D40, D41).
 */
import { sampleEventData, verifySignature } from '@linkhooks/protocol';
import { Webhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { RETRY_DELAYS_MS } from '../src/domain/schedule.js';
import type { EndpointRecord } from '../src/store/records.js';
import { type Api, startApi } from './helpers/api-service.js';
import { headerRecord, type RawReceiver, type RawRequest, startRawReceiver } from './helpers/raw-receiver.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
let receiver: RawReceiver;
// A service of its own per test: a tick runs every delivery due in the store, and an account's
// endpoints all receive its clicks.
let api: Api;
let n = 0;

beforeAll(async () => {
  receiver = await startRawReceiver();
});
afterAll(() => receiver.close());
beforeEach(async () => {
  api = await startApi(receiver.certs);
});
afterEach(() => api.close());

/** An endpoint made through the API, pointed at a route of the raw receiver. */
async function endpointVia(on: Api, answer?: Parameters<RawReceiver['route']>[1], standard = true) {
  const route = `sw${n++}`;
  const res = await on.call('POST', '/v1/endpoints', {
    body: {
      url: receiver.route(route, answer),
      events: ['click', 'conversion'],
      standard_webhooks: standard,
    },
  });
  expect(res.status).toBe(201);
  return { route, id: res.json.id as string, secret: res.json.secret as string };
}

const publishClick = (on: Api) =>
  on.sender.publish(on.alice.account.id, {
    event: 'click',
    data: { ...sampleEventData('click'), click_id: `clk_${n++}` },
  });

const requestsOf = (route: string) => receiver.requests.filter((r) => r.route === route);

/** Runs `verify` with the libraries' clock (Date.now) at the sender's virtual time. */
function atVirtualTime<T>(on: Api, verify: () => T): T {
  vi.useFakeTimers({ toFake: ['Date'], now: on.clock.now() });
  try {
    return verify();
  } finally {
    vi.useRealTimers();
  }
}

const standardVerifies = (req: RawRequest, secret: string) => {
  try {
    new Webhook(secret).verify(req.body.toString('utf8'), headerRecord(req.headers));
    return true;
  } catch {
    return false;
  }
};
const svixVerifies = (req: RawRequest, secret: string) => {
  try {
    new SvixWebhook(secret).verify(req.body.toString('utf8'), headerRecord(req.headers));
    return true;
  } catch {
    return false;
  }
};

describe('the Standard Webhooks form (design D32)', () => {
  it('verifies with standardwebhooks and svix, with the secret as the API returns it, beside X-Service-Signature', async () => {
    const { route, secret } = await endpointVia(api);
    const { eventId } = await publishClick(api);
    await api.sender.tick();
    const [req] = requestsOf(route);
    expect(req!.headers['webhook-id']).toBe(eventId);
    expect(req!.headers['webhook-timestamp']).toBe(String(Math.floor(api.clock.now() / 1000)));
    expect(req!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    atVirtualTime(api, () => {
      expect(standardVerifies(req!, secret)).toBe(true);
      expect(svixVerifies(req!, secret)).toBe(true);
      // The body as received, not another: the libraries do check.
      expect(standardVerifies({ ...req!, body: Buffer.from(`${req!.body} `) }, secret)).toBe(false);
    });
    // Five minutes later the same request is a replay to them.
    api.clock.advance(6 * MIN);
    atVirtualTime(api, () => expect(standardVerifies(req!, secret)).toBe(false));
    expect(verifySignature(req!.body, req!.headers['x-service-signature'] as string, secret).valid).toBe(
      true,
    );
  });

  it('keeps webhook-id across retries and stamps each attempt with its own time', async () => {
    let calls = 0;
    const { route, secret } = await endpointVia(api, () => ({ status: ++calls < 4 ? 500 : 200 }));
    const { eventId } = await publishClick(api);
    const starts: number[] = [];
    starts.push(api.clock.now());
    await api.sender.tick();
    for (const delay of RETRY_DELAYS_MS.slice(0, 3)) {
      api.clock.advance(delay);
      starts.push(api.clock.now());
      expect(await api.sender.tick()).toBe(1);
      const last = requestsOf(route).at(-1)!;
      // Each attempt verifies at its own time.
      atVirtualTime(api, () => expect(standardVerifies(last, secret)).toBe(true));
    }
    const reqs = requestsOf(route);
    expect(reqs).toHaveLength(4);
    expect(new Set(reqs.map((r) => r.headers['webhook-id']))).toEqual(new Set([eventId]));
    expect(reqs.map((r) => Number(r.headers['webhook-timestamp']))).toEqual(
      starts.map((t) => Math.floor(t / 1000)),
    );
    expect(new Set(reqs.map((r) => r.headers['webhook-signature'])).size).toBe(4);
    // X-Service-Signature signs the bytes alone: the same on every attempt (design I1).
    expect(new Set(reqs.map((r) => r.headers['x-service-signature'])).size).toBe(1);
  });

  it('sends none of the three headers to an endpoint that did not ask', async () => {
    const { route } = await endpointVia(api, undefined, false);
    await publishClick(api);
    await api.sender.tick();
    const [req] = requestsOf(route);
    expect(req!.headers['x-service-signature']).toMatch(/^[0-9a-f]{64}$/);
    for (const h of ['webhook-id', 'webhook-timestamp', 'webhook-signature'])
      expect(req!.headers[h]).toBeUndefined();
  });
});

describe('rotation with traffic flowing (design D38, D39)', () => {
  it('never fails a receiver holding [old, new] through the grace; after it only the new secret verifies', async () => {
    // The receiver verifies both headers with either secret it holds, as a customer's would.
    const holding: string[] = [];
    const verifiesWith = (req: RawRequest, secrets: string[]) =>
      verifySignature(req.body, req.headers['x-service-signature'] as string, secrets).valid &&
      atVirtualTime(api, () => secrets.some((s) => standardVerifies(req, s)));
    const {
      route,
      id,
      secret: old,
    } = await endpointVia(api, (req) => ({
      status: verifiesWith(req, holding) ? 200 : 401,
    }));
    holding.push(old);
    const t0 = api.clock.now();
    const rotated = await api.call('POST', `/v1/endpoints/${id}/secret/rotate`, {
      body: { grace_period_seconds: 6 * 3600 },
    });
    const fresh = rotated.json.secret as string;
    expect(rotated.json.previous_secret_expires_at).toBe(new Date(t0 + 6 * HOUR).toISOString());
    // The receiver deploys both a little later, and keeps both until well after the grace.
    api.clock.advance(10 * MIN);
    holding.push(fresh);
    const sent: string[] = [];
    for (let t = 0; t < 8 * HOUR; t += 20 * MIN) {
      const { deliveries } = await publishClick(api);
      sent.push(deliveries[0]!.id);
      expect(await api.sender.tick()).toBeGreaterThanOrEqual(1);
      api.clock.advance(20 * MIN);
    }
    const log = await Promise.all(sent.map((d) => api.sender.getDelivery(api.alice.account.id, d)));
    expect(log.map((d) => [d.delivery.status, d.delivery.attempts])).toEqual(
      sent.map(() => ['delivered', 1]),
    );
    expect(requestsOf(route).filter((r) => r.answer?.status !== 200)).toEqual([]);

    const after = requestsOf(route).filter(
      (r) => Number(r.headers['webhook-timestamp']) * 1000 >= t0 + 6 * HOUR,
    );
    const during = requestsOf(route).filter(
      (r) => Number(r.headers['webhook-timestamp']) * 1000 < t0 + 6 * HOUR,
    );
    expect(after.length).toBeGreaterThan(2);
    expect(during.length).toBeGreaterThan(10);
    for (const req of during) {
      // Staged: X-Service-Signature still the old secret's; webhook-signature one entry per secret.
      expect(verifySignature(req.body, req.headers['x-service-signature'] as string, old).valid).toBe(true);
      expect((req.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
    }
    for (const req of after) {
      expect(verifySignature(req.body, req.headers['x-service-signature'] as string, fresh).valid).toBe(true);
      expect(verifySignature(req.body, req.headers['x-service-signature'] as string, old).valid).toBe(false);
      expect((req.headers['webhook-signature'] as string).split(' ')).toHaveLength(1);
      vi.useFakeTimers({ toFake: ['Date'], now: Number(req.headers['webhook-timestamp']) * 1000 });
      try {
        expect(standardVerifies(req, fresh)).toBe(true);
        expect(standardVerifies(req, old)).toBe(false);
        expect(svixVerifies(req, fresh)).toBe(true);
      } finally {
        vi.useRealTimers();
      }
    }
  });

  it('keeps a receiver that has not yet deployed the new secret working until the grace ends', async () => {
    const {
      route,
      id,
      secret: old,
    } = await endpointVia(api, (req) => ({
      status: verifySignature(req.body, req.headers['x-service-signature'] as string, old).valid ? 200 : 401,
    }));
    const t0 = api.clock.now();
    await api.call('POST', `/v1/endpoints/${id}/secret/rotate`, { body: { grace_period_seconds: 3600 } });
    api.clock.advance(HOUR - 1);
    await publishClick(api);
    await api.sender.tick();
    expect(requestsOf(route).map((r) => r.answer?.status)).toEqual([200]);
    api.clock.set(t0 + HOUR);
    await publishClick(api);
    await api.sender.tick();
    // From the end of the grace, only the new secret signs: this receiver must have switched.
    expect(requestsOf(route).map((r) => r.answer?.status)).toEqual([200, 401]);
  });
});

describe('what a receiver asks (design D40, D41)', () => {
  it('retries a 429 no earlier than Retry-After, in seconds or as an HTTP date', async () => {
    let calls = 0;
    const { route } = await endpointVia(api, () => {
      calls++;
      if (calls === 1) return { status: 429, headers: { 'retry-after': '600' } };
      if (calls === 2) {
        const at = new Date(api.clock.now() + 45 * MIN).toUTCString();
        return { status: 503, headers: { 'retry-after': at } };
      }
      return { status: 200 };
    });
    const { deliveries } = await publishClick(api);
    await api.sender.tick();
    // The schedule says 1 minute; the receiver asked for 10.
    api.clock.advance(10 * MIN - 1);
    expect(await api.sender.tick()).toBe(0);
    api.clock.advance(1);
    expect(await api.sender.tick()).toBe(1);
    // The schedule says 5 minutes; the receiver's date is 45 minutes on (whole seconds).
    api.clock.advance(45 * MIN - 1000);
    expect(await api.sender.tick()).toBe(0);
    api.clock.advance(1000);
    expect(await api.sender.tick()).toBe(1);
    const { delivery, attempts } = await api.sender.getDelivery(api.alice.account.id, deliveries[0]!.id);
    expect(delivery.status).toBe('delivered');
    expect(attempts.map((a) => a.statusCode)).toEqual([429, 503, 200]);
    expect(requestsOf(route)).toHaveLength(3);
  });

  it('never adds an attempt and never waits longer than the longest step', async () => {
    const { route } = await endpointVia(api, () => ({ status: 503, headers: { 'retry-after': '172800' } }));
    const { deliveries } = await publishClick(api);
    const t0 = api.clock.now();
    await api.sender.tick();
    for (let i = 0; i < 5; i++) {
      api.clock.advance(8 * HOUR - 1);
      expect(await api.sender.tick()).toBe(0);
      api.clock.advance(1);
      expect(await api.sender.tick()).toBe(1);
    }
    api.clock.advance(7 * 24 * HOUR);
    expect(await api.sender.tick()).toBe(0);
    const { delivery, attempts } = await api.sender.getDelivery(api.alice.account.id, deliveries[0]!.id);
    expect(delivery.status).toBe('failed');
    expect(attempts.map((a) => a.startedAt - t0)).toEqual([0, 1, 2, 3, 4, 5].map((k) => k * 8 * HOUR));
    expect(requestsOf(route)).toHaveLength(6);
  });

  it('counts a 410 as one failure by default', async () => {
    const { id } = await endpointVia(api, () => ({ status: 410 }));
    const { deliveries } = await publishClick(api);
    await api.sender.tick();
    const { delivery } = await api.sender.getDelivery(api.alice.account.id, deliveries[0]!.id);
    expect(delivery).toMatchObject({ status: 'awaiting_retry', lastStatusCode: 410 });
    expect(await api.sender.getEndpoint(api.alice.account.id, id)).toMatchObject({ enabled: true });
  });

  it('disables the endpoint at the first 410 with --disable-on-gone, holding its deliveries', async () => {
    const disabled: EndpointRecord[] = [];
    const gone = await startApi(receiver.certs, {
      disableOnGone: true,
      onEndpointDisabled: (e) => void disabled.push(e),
    });
    onTestFinished(() => gone.close());
    const { id } = await endpointVia(gone, () => ({ status: 410 }));
    const [first, second] = [await publishClick(gone), await publishClick(gone)];
    await gone.sender.tick();
    const endpoint = await gone.call('GET', `/v1/endpoints/${id}`);
    expect(endpoint.json).toMatchObject({ enabled: false, disabled_reason: 'gone' });
    expect(disabled.map((e) => [e.id, e.disabledReason])).toEqual([[id, 'gone']]);
    for (const p of [first, second]) {
      const { delivery } = await gone.sender.getDelivery(gone.alice.account.id, p.deliveries[0]!.id);
      expect(delivery.status).toBe('held');
    }
    // Re-enabling resumes them, like any disabling.
    const enabled = await gone.call('POST', `/v1/endpoints/${id}/enable`);
    expect(enabled.json.resumed).toBe(2);
  });
});
