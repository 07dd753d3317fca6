/**
 * An endpoint's statistics over HTTP against the real service on SQLite (design D45): events
 * ingested and delivered to a real HTTPS receiver, one route answering 2xx and one 500, are counted
 * by window and bucket; bad windows are refused with a plain message; another account's endpoint
 * is not found; a dashboard session reads them as an API key does.
 */
import { sampleEventData } from '@linkhooks/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, SERVICE_TOKEN, startApi } from '../helpers/api-service.js';
import { addEndpoint } from '../helpers/endpoints.js';
import { type HttpsReceiver, startHttpsReceiver } from '../helpers/https-receiver.js';

const HOUR = 3_600_000;
let receiver: HttpsReceiver;
let api: Api;
let n = 0;
let good: string;
let bad: string;
let started: number;

const ingest = () =>
  api.call('POST', '/internal/v1/events', {
    key: SERVICE_TOKEN,
    body: {
      account_id: api.alice.account.id,
      event: 'click',
      data: { ...sampleEventData('click'), click_id: `clk_${n++}` },
    },
  });

beforeAll(async () => {
  receiver = await startHttpsReceiver();
  // No retries: a failed attempt makes its delivery failed at once.
  api = await startApi(receiver.certs, { retryDelaysMs: [] });
  good = (await addEndpoint(api.sender, receiver, { account: api.alice.account.id })).endpoint.id;
  bad = (await addEndpoint(api.sender, receiver, { account: api.alice.account.id, behaviour: 'status500' }))
    .endpoint.id;
  started = api.clock.now();
  // Two events now and one three hours later, each delivered to both endpoints.
  for (const at of [0, 0, 3 * HOUR]) {
    api.clock.set(started + at);
    expect((await ingest()).status).toBe(202);
    expect(await api.sender.tick()).toBe(2);
  }
  api.clock.set(started + 4 * HOUR);
});
afterAll(async () => {
  await api.close();
  await receiver.close();
});

const stats = (id: string, query = '', options = {}) =>
  api.call('GET', `/v1/endpoints/${id}/stats${query}`, options);

describe('GET /v1/endpoints/:id/stats', () => {
  it('answers the last 24 hours by default: deliveries, attempts, latency and hourly buckets', async () => {
    const res = await stats(good);
    expect(res.status).toBe(200);
    const body = res.json;
    expect(body.window).toBe('24h');
    expect(body.bucket).toBe('hour');
    expect(body.until).toBe(new Date(started + 4 * HOUR).toISOString());
    expect(body.since).toBe(new Date(started - 20 * HOUR).toISOString());
    expect(body.deliveries).toEqual({
      pending: 0,
      awaiting_retry: 0,
      delivered: 3,
      failed: 0,
      held: 0,
      skipped: 0,
    });
    expect(body.attempts).toEqual({ total: 3, succeeded: 3, failed: 0 });
    expect(body.success_rate).toBe(1);
    expect(body.latency_ms.p50).toEqual(expect.any(Number));
    expect(body.latency_ms.p95).toBeGreaterThanOrEqual(body.latency_ms.p50);
    expect(body.last_success_at).toBe(new Date(started + 3 * HOUR).toISOString());
    expect(body.last_failure_at).toBeNull();
    expect(body.buckets).toHaveLength(24);
    // The window starts 20 h before the first attempts: they fall in bucket 20, the last in 23.
    const busy = body.buckets
      .map((b: { succeeded: number; failed: number }, i: number) => [i, b.succeeded, b.failed])
      .filter(([, s, f]: number[]) => s! + f! > 0);
    expect(busy).toEqual([
      [20, 2, 0],
      [23, 1, 0],
    ]);
    expect(body.buckets[20].start).toBe(new Date(started).toISOString());
  });

  it('counts failures of a failing endpoint, and only its own', async () => {
    const body = (await stats(bad, '?window=7d')).json;
    expect(body.bucket).toBe('day');
    expect(body.buckets).toHaveLength(7);
    expect(body.attempts).toEqual({ total: 3, succeeded: 0, failed: 3 });
    expect(body.deliveries.failed).toBe(3);
    expect(body.success_rate).toBe(0);
    expect(body.last_success_at).toBeNull();
    expect(body.last_failure_at).toBe(new Date(started + 3 * HOUR).toISOString());
    expect(body.buckets[6]).toMatchObject({ succeeded: 0, failed: 3 });
  });

  it('answers each window with its buckets, and a window with nothing in it as zeros', async () => {
    expect((await stats(good, '?window=30d')).json.buckets).toHaveLength(30);
    const lastHour = (await stats(good, '?window=1h')).json;
    // Five-minute buckets over the hour: the one attempt in its own.
    expect(lastHour.bucket).toBe('five minutes');
    expect(lastHour.buckets).toHaveLength(12);
    expect(lastHour.buckets.map((b: { start: string }) => b.start)).toEqual(
      Array.from({ length: 12 }, (_, i) => new Date(started + 3 * HOUR + i * 300_000).toISOString()),
    );
    const busy = lastHour.buckets.filter((b: { succeeded: number }) => b.succeeded > 0);
    expect(busy).toEqual([
      {
        start: expect.any(String),
        succeeded: 1,
        failed: 0,
        latency_ms: { mean: expect.any(Number), max: expect.any(Number) },
      },
    ]);
    // One attempt in the bucket: its mean and its slowest are its own duration.
    expect(busy[0].latency_ms.mean).toBe(busy[0].latency_ms.max);
    const quiet = (await addEndpoint(api.sender, receiver, { account: api.alice.account.id })).endpoint;
    const none = (await stats(quiet.id)).json;
    expect(none.attempts).toEqual({ total: 0, succeeded: 0, failed: 0 });
    expect(none.deliveries.delivered).toBe(0);
    expect(none.success_rate).toBeNull();
    expect(none.latency_ms).toEqual({ p50: null, p95: null });
    expect(
      none.buckets.every((b: { succeeded: number; failed: number }) => b.succeeded + b.failed === 0),
    ).toBe(true);
    expect(none.buckets[0].latency_ms).toEqual({ mean: null, max: null });
  });

  it('refuses an unknown window or parameter with a plain message', async () => {
    for (const query of ['?window=2h', '?window=', '?window=24h&window=7d', '?since=2026-11-01']) {
      const res = await stats(good, query);
      expect(res.status, query).toBe(400);
      expect(res.json.error.code).toBe('invalid_request');
    }
    expect((await stats(good, '?window=2h')).json.error.message).toBe(
      'query.window: must be one of 1h, 24h, 7d, 30d',
    );
  });

  it('does not find another account’s endpoint, nor answer without credentials', async () => {
    expect((await stats(good, '', { key: api.bob.apiKey })).status).toBe(404);
    expect((await stats('ep_missing')).status).toBe(404);
    expect((await stats(good, '', { key: null })).status).toBe(401);
  });

  it('answers a dashboard session as it answers the API key', async () => {
    const cookie = await api.signIn();
    const byCookie = await stats(good, '', { key: null, headers: { cookie } });
    expect(byCookie.status).toBe(200);
    expect(byCookie.json).toEqual((await stats(good)).json);
  });
});
