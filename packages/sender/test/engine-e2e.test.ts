/**
 * The engine end to end over real HTTPS: a receiver built on @linkhooks/receiver, a test CA,
 * and virtual time for the retry schedule (design R4, design R11–R14).
 */
import { EVENT_NAMES, type EventName, eventSchemas, isTimestamp } from '@linkhooks/protocol';
import { buildEvent, generateSecret } from '@linkhooks/receiver/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ManualClock } from '../src/clock.js';
import { RETRY_DELAYS_MS } from '../src/domain/schedule.js';
import type { Sender } from '../src/engine/sender.js';
import { addEndpoint } from './helpers/endpoints.js';
import { ACCOUNT, makeSender } from './helpers/harness.js';
import { type HttpsReceiver, startHttpsReceiver } from './helpers/https-receiver.js';
import { createTestCertificates } from './helpers/test-ca.mjs';

let receiver: HttpsReceiver;
const senders: Sender[] = [];

beforeAll(async () => {
  receiver = await startHttpsReceiver();
});
afterAll(() => receiver.close());
afterEach(async () => {
  await Promise.all(senders.splice(0).map((s) => s.stop(0)));
  receiver.received.length = 0;
  receiver.hits.length = 0;
});

function setup(options: Parameters<typeof makeSender>[1] = {}) {
  const made = makeSender(receiver.certs, options);
  senders.push(made.sender);
  return made;
}

const sample = (name: EventName) => {
  const { event, data } = buildEvent(name);
  return { event, data };
};

/** A click to a new endpoint that answers 500, after its first attempt. */
async function clickFailedOnce() {
  const made = setup();
  const { endpoint, route } = await addEndpoint(made.sender, receiver, { behaviour: 'status500' });
  const { deliveries } = await made.sender.publish(ACCOUNT, sample('click'));
  await made.sender.tick();
  return { ...made, endpoint, route, deliveryId: deliveries[0]!.id };
}

describe('delivery end to end over HTTPS', () => {
  it('delivers each of the 6 events to exactly the endpoints subscribed to it, signed and schema-valid', async () => {
    const { sender } = setup();
    const everything = await addEndpoint(sender, receiver, { events: [...EVENT_NAMES] });
    const clicks = await addEndpoint(sender, receiver);
    const links = await addEndpoint(sender, receiver, {
      events: ['link.created', 'link.updated', 'link.deleted'],
    });
    const published = new Map<string, EventName>();
    for (const name of EVENT_NAMES) {
      const { eventId } = await sender.publish(ACCOUNT, sample(name));
      published.set(eventId, name);
    }
    await sender.tick();

    const byRoute = (route: string) =>
      receiver.received
        .filter((r) => r.route === route)
        .map((r) => r.event.event)
        .sort();
    expect(byRoute(everything.route)).toEqual([...EVENT_NAMES].sort());
    expect(byRoute(clicks.route)).toEqual(['click']);
    expect(byRoute(links.route)).toEqual(['link.created', 'link.deleted', 'link.updated']);
    for (const r of receiver.received) {
      // The receiver verified the signature before recording; check the body independently too.
      const parsed = JSON.parse(r.rawBody);
      expect(eventSchemas[parsed.event as EventName].safeParse(parsed).success).toBe(true);
      expect(isTimestamp(parsed.timestamp)).toBe(true);
      expect(parsed.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
      expect(published.get(r.eventId!)).toBe(parsed.event);
      expect(r.attempt).toBe(1);
    }
    const hit = receiver.hits[0]!.headers;
    expect(hit['content-type']).toBe('application/json');
    expect(hit['user-agent']).toMatch(/^linkhooks\//);
    expect(hit['x-service-signature']).toMatch(/^[0-9a-f]{64}$/);
    const log = await sender.listDeliveries(ACCOUNT, { limit: 100 });
    expect(log.items).toHaveLength(6 + 1 + 3);
    expect(log.items.every((d) => d.status === 'delivered')).toBe(true);
  });

  it('runs the whole schedule in virtual time: +0, +1 m, +6 m, +36 m, +2 h 36 m, +10 h 36 m, then failed', async () => {
    const { sender, clock } = setup();
    const { route: name } = await addEndpoint(sender, receiver);
    receiver.behave(name, 'status500');
    const t0 = clock.now();
    const { deliveries } = await sender.publish(ACCOUNT, sample('click'));
    await sender.tick();
    for (const delay of RETRY_DELAYS_MS) {
      // One millisecond early: nothing is due yet.
      clock.advance(delay - 1);
      expect(await sender.tick()).toBe(0);
      clock.advance(1);
      expect(await sender.tick()).toBe(1);
    }
    clock.advance(24 * 60 * 60_000);
    expect(await sender.tick()).toBe(0);

    const { delivery, attempts } = await sender.getDelivery(ACCOUNT, deliveries[0]!.id);
    expect(delivery.status).toBe('failed');
    const MIN = 60_000;
    expect(attempts.map((a) => a.startedAt - t0)).toEqual([0, MIN, 6 * MIN, 36 * MIN, 156 * MIN, 636 * MIN]);
    expect(attempts.map((a) => [a.number, a.statusCode, a.failureKind])).toEqual(
      [1, 2, 3, 4, 5, 6].map((n) => [n, 500, 'http_status']),
    );
    expect(attempts.at(-1)!.nextAttemptAt).toBeNull();
    const hits = receiver.hits.filter((h) => h.route === name);
    expect(hits.map((h) => h.headers['x-service-attempt'])).toEqual(['1', '2', '3', '4', '5', '6']);
    // Every attempt sends the same bytes, so the same signature (design I1).
    expect(new Set(hits.map((h) => h.headers['x-service-signature'])).size).toBe(1);
    expect(new Set(hits.map((h) => h.headers['x-service-delivery-id'])).size).toBe(1);
    expect(attempts[0]!.responseSnippet).toContain('receiver is down');
  });

  it('applies new events to events published from then on: a delivery already made keeps its retries', async () => {
    const { sender, clock, endpoint, route: name, deliveryId } = await clickFailedOnce();
    await sender.updateEndpoint(ACCOUNT, endpoint.id, { events: ['conversion'] });
    // A click published now is not the endpoint's; the first one's retry still goes.
    expect((await sender.publish(ACCOUNT, sample('click'))).deliveries).toEqual([]);
    receiver.behave(name, 'ok');
    clock.advance(RETRY_DELAYS_MS[0]!);
    expect(await sender.tick()).toBe(1);
    const { delivery } = await sender.getDelivery(ACCOUNT, deliveryId);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 2 });
  });

  it('stops retrying at the first success', async () => {
    const { sender, clock } = setup();
    const { route: name } = await addEndpoint(sender, receiver, { events: ['conversion'] });
    receiver.behave(name, 'status500');
    const { deliveries } = await sender.publish(ACCOUNT, sample('conversion'));
    await sender.tick();
    clock.advance(RETRY_DELAYS_MS[0]!);
    await sender.tick();
    receiver.behave(name, 'ok');
    clock.advance(RETRY_DELAYS_MS[1]!);
    expect(await sender.tick()).toBe(1);
    clock.advance(24 * 60 * 60_000);
    expect(await sender.tick()).toBe(0);
    const { delivery, attempts } = await sender.getDelivery(ACCOUNT, deliveries[0]!.id);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 3, nextAttemptAt: null });
    expect(attempts.map((a) => a.failureKind)).toEqual(['http_status', 'http_status', null]);
    expect(receiver.received.filter((r) => r.route === name).map((r) => r.attempt)).toEqual([3]);
  });
});

describe('each failure counts once, with its kind', () => {
  async function firstAttempt(behaviour: Parameters<HttpsReceiver['behave']>[1], options = {}) {
    const { sender } = setup(options);
    const { route: name } = await addEndpoint(sender, receiver);
    receiver.behave(name, behaviour);
    const { deliveries } = await sender.publish(ACCOUNT, sample('click'));
    await sender.tick();
    return sender.getDelivery(ACCOUNT, deliveries[0]!.id);
  }

  it.each([
    ['a 5xx', 'status500', 'http_status', 500],
    ['a 3xx (redirects are never followed)', 'redirect', 'http_status', 307],
    ['a receiver that never answers', 'hang', 'timeout', null],
    ['a reset connection', 'reset', 'connect', null],
    ['a 401 from a receiver checking another secret', 'wrong-secret', 'http_status', 401],
  ] as const)('%s', async (_, behaviour, kind, status) => {
    const { delivery, attempts } = await firstAttempt(behaviour, { attemptTimeoutMs: 300, leaseMs: 5_000 });
    expect(delivery).toMatchObject({ status: 'awaiting_retry', attempts: 1, lastFailureKind: kind });
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ failureKind: kind, statusCode: status });
    expect(receiver.hits.filter((h) => h.route === 'redirected')).toHaveLength(0);
    if (behaviour === 'hang') expect(attempts[0]!.durationMs).toBeGreaterThanOrEqual(290);
  });

  it('a refused connection', async () => {
    const { sender } = setup();
    const endpoint = await sender.createEndpoint(ACCOUNT, {
      url: 'https://127.0.0.1:1/hook',
      events: ['click'],
    });
    const { deliveries } = await sender.publish(ACCOUNT, sample('click'));
    await sender.tick();
    const { attempts } = await sender.getDelivery(ACCOUNT, deliveries[0]!.id);
    expect(endpoint.url).toBe('https://127.0.0.1:1/hook');
    expect(attempts[0]).toMatchObject({ failureKind: 'connect', statusCode: null });
    expect(attempts[0]!.errorMessage).toMatch(/ECONNREFUSED/);
    // Node names the address it connected to; the customer's log does not.
    expect(attempts[0]!.errorMessage).not.toMatch(/127\.0\.0\.1/);
  });

  it('a TLS error: a certificate the sender does not trust', async () => {
    const { sender } = setup({ ca: createTestCertificates().ca });
    const { route: name } = await addEndpoint(sender, receiver);
    const { deliveries } = await sender.publish(ACCOUNT, sample('click'));
    await sender.tick();
    const { attempts } = await sender.getDelivery(ACCOUNT, deliveries[0]!.id);
    expect(attempts[0]!.failureKind).toBe('tls');
    expect(receiver.hits.filter((h) => h.route === name)).toHaveLength(0);
  });

  it('a name that does not resolve at delivery', async () => {
    let calls = 0;
    const { sender } = setup({
      resolve: (host, _options, callback) => {
        calls++;
        if (calls === 1) return callback(null, [{ address: '127.0.0.1', family: 4 }]);
        const error = Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
        callback(error, [], 4);
      },
    });
    await addEndpoint(sender, receiver, { host: 'receiver.test' });
    const { deliveries } = await sender.publish(ACCOUNT, sample('click'));
    await sender.tick();
    expect((await sender.getDelivery(ACCOUNT, deliveries[0]!.id)).attempts[0]!.failureKind).toBe('dns');
  });
});

describe('disabling (design D1–D3)', () => {
  async function failDeliveries(sender: Sender, clock: ManualClock, count: number) {
    for (let i = 0; i < count; i++) await sender.publish(ACCOUNT, sample('click'));
    await sender.tick();
    for (const delay of RETRY_DELAYS_MS) {
      clock.advance(delay);
      await sender.tick();
    }
  }

  it('disables after 10 consecutive failed deliveries, holds and skips, and loses nothing on re-enable', async () => {
    const disabled: string[] = [];
    const { sender, clock } = setup({ onEndpointDisabled: (e) => void disabled.push(e.id) });
    const { route: name, endpoint } = await addEndpoint(sender, receiver);
    receiver.behave(name, 'status500');
    await failDeliveries(sender, clock, 9);
    expect(await sender.getEndpoint(ACCOUNT, endpoint.id)).toMatchObject({
      enabled: true,
      consecutiveFailures: 9,
    });
    // The 10th failing delivery (x) runs its whole schedule; y, published a minute later, is in the
    // middle of its retries when x fails for good, so y is held, not dropped.
    await sender.publish(ACCOUNT, sample('click'));
    await sender.tick();
    clock.advance(RETRY_DELAYS_MS[0]!);
    const { deliveries: inFlight } = await sender.publish(ACCOUNT, sample('click'));
    await sender.tick();
    for (const delay of RETRY_DELAYS_MS.slice(1)) {
      clock.advance(delay);
      await sender.tick();
    }
    expect(disabled).toEqual([endpoint.id]);
    const current = await sender.getEndpoint(ACCOUNT, endpoint.id);
    expect(current).toMatchObject({
      enabled: false,
      consecutiveFailures: 10,
      disabledReason: 'consecutive_failures',
    });
    expect(current.disabledAt).toBe(clock.now());
    expect((await sender.getDelivery(ACCOUNT, inFlight[0]!.id)).delivery.status).toBe('held');

    const { deliveries: skipped } = await sender.publish(ACCOUNT, sample('click'));
    expect(skipped[0]!.status).toBe('skipped');
    const hitsBefore = receiver.hits.length;
    clock.advance(24 * 60 * 60_000);
    expect(await sender.tick()).toBe(0);
    expect(receiver.hits.length).toBe(hitsBefore);

    receiver.behave(name, 'ok');
    const result = await sender.reenableEndpoint(ACCOUNT, endpoint.id, { replaySkipped: true });
    expect(result).toMatchObject({
      resumed: 1,
      replayed: 1,
      endpoint: { enabled: true, consecutiveFailures: 0 },
    });
    await sender.tick();
    const delivered = receiver.received.filter((r) => r.route === name).map((r) => r.deliveryId);
    expect(delivered.sort()).toEqual([inFlight[0]!.id, skipped[0]!.id].sort());
  });

  it('resets the count when a delivery succeeds in between', async () => {
    const { sender, clock } = setup();
    const { route: name, endpoint } = await addEndpoint(sender, receiver);
    receiver.behave(name, 'status500');
    await failDeliveries(sender, clock, 9);
    receiver.behave(name, 'ok');
    await sender.publish(ACCOUNT, sample('click'));
    await sender.tick();
    expect((await sender.getEndpoint(ACCOUNT, endpoint.id)).consecutiveFailures).toBe(0);
    receiver.behave(name, 'status500');
    await failDeliveries(sender, clock, 9);
    expect(await sender.getEndpoint(ACCOUNT, endpoint.id)).toMatchObject({
      enabled: true,
      consecutiveFailures: 9,
    });
  });

  it('counts per attempt when that option is chosen', async () => {
    const { sender } = setup({ disablePolicy: { countPer: 'attempt' } });
    const { route: name, endpoint } = await addEndpoint(sender, receiver);
    receiver.behave(name, 'status500');
    for (let i = 0; i < 10; i++) await sender.publish(ACCOUNT, sample('click'));
    await sender.tick();
    expect(await sender.getEndpoint(ACCOUNT, endpoint.id)).toMatchObject({
      enabled: false,
      consecutiveFailures: 10,
    });
  });
});

describe('retry now', () => {
  it('sends a failed delivery again at once', async () => {
    const { sender, clock, route: name, deliveryId } = await clickFailedOnce();
    receiver.behave(name, 'ok');
    await sender.retryDelivery(ACCOUNT, deliveryId);
    expect(await sender.tick()).toBe(1);
    expect((await sender.getDelivery(ACCOUNT, deliveryId)).delivery.status).toBe('delivered');
    clock.advance(RETRY_DELAYS_MS[0]!);
    expect(await sender.tick()).toBe(0);
    await expect(sender.retryDelivery('acct_other', deliveryId)).rejects.toMatchObject({
      code: 'not_found',
    });
  });

  it('sends a failed delivery as its 7th attempt: the count goes on past the schedule', async () => {
    const { sender, clock, route: name, deliveryId } = await clickFailedOnce();
    for (const delay of RETRY_DELAYS_MS) {
      clock.advance(delay);
      await sender.tick();
    }
    expect((await sender.getDelivery(ACCOUNT, deliveryId)).delivery.status).toBe('failed');
    receiver.behave(name, 'ok');
    await sender.retryDelivery(ACCOUNT, deliveryId);
    expect(await sender.tick()).toBe(1);
    const hits = receiver.hits.filter((h) => h.route === name);
    expect(hits.map((h) => h.headers['x-service-attempt'])).toEqual(['1', '2', '3', '4', '5', '6', '7']);
    const { delivery, attempts } = await sender.getDelivery(ACCOUNT, deliveryId);
    expect(delivery.status).toBe('delivered');
    expect(attempts.at(-1)).toMatchObject({ number: 7, statusCode: 200 });
  });
});

describe('publish', () => {
  it('refuses an invalid event with a clear error, and stores nothing', async () => {
    const { sender } = setup();
    await addEndpoint(sender, receiver);
    await expect(sender.publish(ACCOUNT, { event: 'clicks', data: {} })).rejects.toMatchObject({
      code: 'invalid_event',
    });
    const bad = { ...sample('click'), data: { ...sample('click').data, link_id: 'x' } };
    await expect(sender.publish(ACCOUNT, bad)).rejects.toThrow(/data\.link_id/);
    const flags = { ...sample('click'), data: { ...sample('click').data, fraud_flags: [{ x: 1 }] } };
    await expect(sender.publish(ACCOUNT, flags)).rejects.toThrow(/fraud_flags/);
    expect((await sender.listDeliveries(ACCOUNT, { limit: 10 })).items).toEqual([]);
  });

  it('stamps the event with the clock in the envelope form', async () => {
    const { sender, clock } = setup();
    await addEndpoint(sender, receiver, { events: ['link.deleted'] });
    clock.set(Date.UTC(2026, 10, 22, 10, 4, 5, 678));
    await sender.publish(ACCOUNT, sample('link.deleted'));
    await sender.tick();
    expect(JSON.parse(receiver.received[0]!.rawBody).timestamp).toBe('2026-11-22T10:04:05Z');
  });

  it('refuses endpoints with a non-HTTPS URL or unknown events', async () => {
    const { sender } = setup();
    await expect(
      sender.createEndpoint(ACCOUNT, { url: 'http://localhost/x', events: ['click'] }),
    ).rejects.toMatchObject({
      code: 'unsafe_url',
    });
    await expect(
      sender.createEndpoint(ACCOUNT, { url: `${receiver.origin}/x`, events: ['click', 'clicks'] }),
    ).rejects.toThrow(/unknown events: clicks/);
    await expect(
      sender.createEndpoint(ACCOUNT, { url: `${receiver.origin}/x`, events: [] }),
    ).rejects.toMatchObject({
      code: 'invalid_endpoint',
    });
  });
});

describe('the test secret', () => {
  it('is a fresh whsec_ secret per endpoint', async () => {
    const { sender } = setup();
    const a = await sender.createEndpoint(ACCOUNT, { url: `${receiver.origin}/a`, events: ['click'] });
    const b = await sender.createEndpoint(ACCOUNT, { url: `${receiver.origin}/b`, events: ['click'] });
    expect(a.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(a.secret).not.toBe(b.secret);
    expect(generateSecret()).not.toBe(a.secret);
  });
});
