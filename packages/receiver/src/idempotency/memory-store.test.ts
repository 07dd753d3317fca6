import { afterEach, describe, expect, it, vi } from 'vitest';
import type { MemoryStoreWarning } from './eviction-warning.js';
import { createMemoryStore } from './memory-store.js';
import { runOnce } from './run-once.js';
import { DEFAULT_COMPLETED_TTL_MS, DEFAULT_IN_FLIGHT_TTL_MS } from './store.js';

const DAY = DEFAULT_COMPLETED_TTL_MS;

/** A store on a clock the test moves, collecting its warnings. */
function storeAt(start: number, maxEntries?: number) {
  const clock = { now: start };
  const warnings: MemoryStoreWarning[] = [];
  const store = createMemoryStore({ maxEntries, now: () => clock.now, onWarning: (w) => warnings.push(w) });
  return { store, clock, warnings };
}

/** Claims and completes `key` the way a handled delivery does. */
async function handled(store: ReturnType<typeof createMemoryStore>, key: string): Promise<void> {
  await store.claim(key, `t-${key}`, DEFAULT_IN_FLIGHT_TTL_MS);
  await store.complete(key, `t-${key}`, DAY);
}

afterEach(() => vi.restoreAllMocks());

describe('memory store: TTLs within the budget', () => {
  it('recognises a retry as a duplicate after 10,001 other clicks', async () => {
    const { store, clock, warnings } = storeAt(1_000_000);
    let runs = 0;
    const deliver = (key: string) => runOnce({ store }, key, () => runs++);
    expect((await deliver('click:first')).status).toBe('ran');
    for (let i = 0; i < 10_001; i++) {
      clock.now += 1_000;
      await deliver(`click:other-${i}`);
    }
    // Nearly three hours later, well inside the 24 h TTL: the retry must not run the handler.
    expect((await deliver('click:first')).status).toBe('duplicate');
    expect(runs).toBe(10_002);
    expect(store.stats()).toEqual({ size: 10_002, maxEntries: 1_000_000, evictedBeforeTtl: 0 });
    expect(warnings).toEqual([]);
  });

  it('defaults to a budget of 1,000,000 keys', () => {
    expect(createMemoryStore().stats().maxEntries).toBe(1_000_000);
  });

  it('forgets a completed key after its TTL and drops expired keys on the next write', async () => {
    const { store, clock } = storeAt(0);
    for (const key of ['a', 'b', 'c']) await handled(store, key);
    await store.claim('crashed', 't', DEFAULT_IN_FLIGHT_TTL_MS);
    clock.now = DAY - 1;
    expect(await store.claim('a', 'u', 1_000)).toBe('completed');
    clock.now = DAY;
    await store.claim('later', 't', DEFAULT_IN_FLIGHT_TTL_MS);
    // a, b, c and the crashed claim are past their TTLs: only the new claim is left.
    expect(store.size).toBe(1);
    expect(await store.claim('b', 'u', DEFAULT_IN_FLIGHT_TTL_MS)).toBe('claimed');
  });

  it('lets a crashed claim go after the in-flight TTL while completed keys stay', async () => {
    const { store, clock } = storeAt(0);
    await handled(store, 'done');
    await store.claim('crashed', 't', DEFAULT_IN_FLIGHT_TTL_MS);
    clock.now = DEFAULT_IN_FLIGHT_TTL_MS;
    await store.claim('next', 't', DEFAULT_IN_FLIGHT_TTL_MS);
    expect(store.size).toBe(2);
    expect(await store.claim('crashed', 'u', DEFAULT_IN_FLIGHT_TTL_MS)).toBe('claimed');
    expect(await store.claim('done', 'u', DEFAULT_IN_FLIGHT_TTL_MS)).toBe('completed');
  });
});

describe('memory store: past the budget', () => {
  it('evicts only past maxEntries, the key closest to expiry first, and counts each one', async () => {
    const { store, clock, warnings } = storeAt(0, 3);
    for (const key of ['a', 'b', 'c']) {
      await handled(store, key);
      clock.now += 1_000;
    }
    expect(store.stats().evictedBeforeTtl).toBe(0);
    expect(warnings).toEqual([]);
    await handled(store, 'd');
    expect(store.stats()).toEqual({ size: 3, maxEntries: 3, evictedBeforeTtl: 1 });
    expect(await store.claim('a', 'u', DEFAULT_IN_FLIGHT_TTL_MS)).toBe('claimed');
    expect(await store.claim('d', 'u', DEFAULT_IN_FLIGHT_TTL_MS)).toBe('completed');
  });

  it('forgets a completed key before a running handler’s claim', async () => {
    const { store, clock } = storeAt(0, 3);
    await handled(store, 'done-1');
    await handled(store, 'done-2');
    clock.now += 1_000;
    // A handler is running: its claim expires long before the completed keys do.
    expect(await store.claim('running', 't-running', DEFAULT_IN_FLIGHT_TTL_MS)).toBe('claimed');
    await store.claim('new', 't-new', DEFAULT_IN_FLIGHT_TTL_MS);
    expect(store.stats().evictedBeforeTtl).toBe(1);
    // A redelivery of the running one still waits for it rather than running it twice at once.
    expect(await store.claim('running', 'other', DEFAULT_IN_FLIGHT_TTL_MS)).toBe('in_flight');
    expect(await store.claim('done-2', 'other', DEFAULT_IN_FLIGHT_TTL_MS)).toBe('completed');
  });

  it('does not count expired keys as evicted when it makes room', async () => {
    const { store, clock, warnings } = storeAt(0, 2);
    await handled(store, 'a');
    await handled(store, 'b');
    clock.now = DAY;
    await handled(store, 'c');
    await handled(store, 'd');
    expect(store.stats().evictedBeforeTtl).toBe(0);
    expect(warnings).toEqual([]);
  });

  it('warns once per burst, with the running count, and again a minute later if it goes on', async () => {
    const { store, clock, warnings } = storeAt(0, 2);
    for (let i = 0; i < 12; i++) await handled(store, `k${i}`);
    expect(store.stats().evictedBeforeTtl).toBe(10);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ code: 'evicted_before_ttl', evictedBeforeTtl: 1 });
    expect(warnings[0]!.message).toMatch(/maxEntries/);
    clock.now += 60_000;
    await handled(store, 'k12');
    expect(warnings.map((w) => w.evictedBeforeTtl)).toEqual([1, 11]);
  });

  it('warns through process.emitWarning when no hook is given', async () => {
    const emit = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const store = createMemoryStore({ maxEntries: 1, now: () => 0 });
    await store.claim('a', 't', DAY);
    await store.claim('b', 't', DAY);
    await store.claim('c', 't', DAY);
    expect(emit).toHaveBeenCalledTimes(1);
    expect(emit.mock.calls[0]![1]).toMatchObject({ code: 'LINKHOOKS_EVICTED_BEFORE_TTL' });
  });

  it('rejects a nonsensical budget', () => {
    expect(() => createMemoryStore({ maxEntries: 0 })).toThrow(RangeError);
    expect(() => createMemoryStore({ maxEntries: 1.5 })).toThrow(
      'maxEntries must be a whole number above 0, got 1.5',
    );
  });
});
