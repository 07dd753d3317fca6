import { createHash } from 'node:crypto';
import {
  createMemoryStore,
  type IdempotencyStore,
  idempotencyKey,
  isWebhookError,
  runOnce,
} from '@linkhooks/receiver';
import { webhookHandler } from '@linkhooks/receiver/fetch';
import { createRedisStore } from '@linkhooks/receiver/redis';
import { buildEvent } from '@linkhooks/receiver/testing';
import IORedis from 'ioredis';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { idempotencyBattery } from './helpers/idempotency-battery.js';
import { REDIS_URL, requireService } from './helpers/services.js';

idempotencyBattery('memory', () => {
  let now = 1_000_000;
  const store = createMemoryStore({ now: () => now });
  // The memory store judges TTLs by its clock; moving it past a day lapses every key.
  return {
    store,
    lapse: async () => {
      now += 2 * 86_400_000;
    },
  };
});

const redisUp = await requireService('Redis', REDIS_URL);
const prefix = `linkhooks:test:${process.pid}:${Date.now()}:`;

describe.runIf(redisUp)('redis', () => {
  const ioredis = new IORedis(REDIS_URL, { lazyConnect: false, maxRetriesPerRequest: 1 });
  const nodeRedis = createClient({ url: REDIS_URL });
  const connected = nodeRedis.connect();
  afterAll(async () => {
    const keys = await ioredis.keys(`${prefix}*`);
    if (keys.length > 0) await ioredis.del(...keys);
    await ioredis.quit();
    await connected;
    await nodeRedis.quit();
  });
  const lapse = async (key: string) => void (await ioredis.del(prefix + key));

  idempotencyBattery('redis (ioredis)', () => ({ store: createRedisStore(ioredis, { prefix }), lapse }));
  idempotencyBattery('redis (node-redis)', () => ({
    store: createRedisStore(nodeRedis as never, { prefix }),
    lapse,
  }));

  it('sets the in-flight TTL on claim and the completed TTL on completion (design D12: 60 s, 24 h)', async () => {
    const store = createRedisStore(ioredis, { prefix });
    await store.claim('ttl-key', 'a', 60_000);
    const inFlight = await ioredis.pttl(`${prefix}ttl-key`);
    expect(inFlight).toBeGreaterThan(55_000);
    expect(inFlight).toBeLessThanOrEqual(60_000);
    await store.complete('ttl-key', 'a', 86_400_000);
    const completed = await ioredis.pttl(`${prefix}ttl-key`);
    expect(completed).toBeGreaterThan(86_000_000);
    expect(completed).toBeLessThanOrEqual(86_400_000);
  });

  it('refuses a client that is neither ioredis nor node-redis', () => {
    expect(() => createRedisStore({} as never)).toThrow(/ioredis or node-redis/);
  });
});

describe('runOnce with a store that is down', () => {
  const down: IdempotencyStore = {
    claim: () => Promise.reject(new Error('ECONNREFUSED')),
    complete: () => Promise.reject(new Error('ECONNREFUSED')),
    release: () => Promise.reject(new Error('ECONNREFUSED')),
  };
  it('fails with idempotency_unavailable (503: the service retries) and does not run the handler', async () => {
    let ran = false;
    const error = await runOnce({ store: down }, 'k', () => {
      ran = true;
    }).catch((e: unknown) => e);
    expect(isWebhookError(error) && [error.code, error.status]).toEqual(['idempotency_unavailable', 503]);
    expect(ran).toBe(false);
  });
});

describe('runOnce with a store that does not answer', () => {
  it('fails with idempotency_unavailable once its time is up, and lets go of a claim that lands late', async () => {
    let land: (result: 'claimed') => void = () => {};
    const released: string[] = [];
    const slow: IdempotencyStore = {
      claim: () => new Promise((resolve) => (land = resolve)),
      complete: () => Promise.resolve(),
      release: async (key) => void released.push(key),
    };
    let ran = false;
    const error = await runOnce({ store: slow, storeTimeoutMs: 50 }, 'k', () => {
      ran = true;
    }).catch((e: unknown) => e);
    expect(isWebhookError(error) && [error.code, error.status]).toEqual(['idempotency_unavailable', 503]);
    expect(isWebhookError(error) && error.hint).toMatch(/did not answer within 50 ms.*maxRetriesPerRequest/);
    expect(ran).toBe(false);
    land('claimed');
    await new Promise((resolve) => setImmediate(resolve));
    expect(released).toEqual(['k']);
  });

  it('acknowledges a run whose completion the store does not record in time, and says so', async () => {
    const told: unknown[] = [];
    const hanging: IdempotencyStore = {
      claim: async () => 'claimed',
      complete: () => new Promise(() => {}),
      release: async () => {},
    };
    const result = await runOnce(
      { store: hanging, storeTimeoutMs: 50, onStoreError: (e) => told.push(e) },
      'k',
      () => 7,
    );
    expect(result).toEqual({ status: 'ran', value: 7 });
    expect(String(told[0])).toMatch(/did not answer within 50 ms/);
  });

  it('takes a store that throws rather than reject as unreachable, and refuses a time limit that is no number of ms', async () => {
    const throwing: IdempotencyStore = {
      claim: () => {
        throw new Error('not connected');
      },
      complete: async () => {},
      release: async () => {},
    };
    const error = await runOnce({ store: throwing }, 'k', () => 1).catch((e: unknown) => e);
    expect(isWebhookError(error) && error.code).toBe('idempotency_unavailable');
    for (const storeTimeoutMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(runOnce({ store: throwing, storeTimeoutMs }, 'k', () => 1)).rejects.toThrow(
        /storeTimeoutMs/,
      );
      expect(() =>
        webhookHandler({
          secret: 'whsec_test_secret_for_options',
          idempotency: { store: throwing, storeTimeoutMs },
        }),
      ).toThrow(/storeTimeoutMs must be a number of milliseconds above 0/);
    }
  });

  it('refuses, when the adapter is made, a claim or a memory given in seconds rather than milliseconds', () => {
    const store = createMemoryStore();
    const make = (idempotency: Record<string, number>) => () =>
      webhookHandler({ secret: 'whsec_test_secret_for_options', idempotency: { store, ...idempotency } });
    expect(make({ inFlightTtlMs: 60 })).toThrow(
      'linkhooks: idempotency.inFlightTtlMs is in milliseconds and must be at least 1000 (a second), got 60',
    );
    expect(make({ completedTtlMs: 0 })).toThrow(/completedTtlMs is in milliseconds .* got 0$/);
    expect(make({ inFlightTtlMs: Number.NaN })).toThrow(/inFlightTtlMs/);
    expect(make({ inFlightTtlMs: 60_000, completedTtlMs: 86_400_000 })).not.toThrow();
  });

  it('answers 503 in time with an ioredis client left at its defaults whose Redis is gone', async () => {
    // Nothing listens there: ioredis queues the command and reconnects, twenty times, by default.
    const gone = new IORedis('redis://127.0.0.1:9', { lazyConnect: true });
    gone.on('error', () => {});
    try {
      const error = await runOnce({ store: createRedisStore(gone), storeTimeoutMs: 300 }, 'k', () => 1).catch(
        (e: unknown) => e,
      );
      expect(isWebhookError(error) && error.code).toBe('idempotency_unavailable');
    } finally {
      gone.disconnect();
    }
  });
});

describe('idempotency keys (design D11)', () => {
  it('keys clicks on click_id and conversions on conversion_id', async () => {
    const click = buildEvent('click');
    const conversion = buildEvent('conversion');
    expect(await idempotencyKey(click, JSON.stringify(click))).toBe(`click:${click.data.click_id}`);
    expect(await idempotencyKey(conversion, '{}')).toBe(`conversion:${conversion.data.conversion_id}`);
  });

  it('keys other events on the SHA-256 of the raw body', async () => {
    const event = buildEvent('link.updated');
    const body = Buffer.from(JSON.stringify(event));
    const expected = createHash('sha256').update(body).digest('hex');
    expect(await idempotencyKey(event, body)).toBe(`link.updated:${expected}`);
    expect(await idempotencyKey(event, body.toString())).toBe(`link.updated:${expected}`);
  });
});
