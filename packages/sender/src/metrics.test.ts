import { afterEach, describe, expect, it, vi } from 'vitest';
import { createMetrics, STATS_MAX_AGE_MS, STATS_STALE_LIMIT_MS, STATS_WAIT_MS } from './metrics.js';
import type { StoreStats } from './store/port.js';

describe('the store counts in /metrics', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reads the store once per STATS_MAX_AGE_MS however often it is scraped, and never twice at once', async () => {
    let reads = 0;
    let release: () => void = () => undefined;
    /** Reads wait for `release` while set; unset, a read answers within the same turn. */
    let held = true;
    const stats = (): Promise<StoreStats> => {
      reads++;
      const counts = { queued: { pending: reads, awaiting_retry: 0, held: 0 }, disabledEndpoints: 2 };
      if (!held) return Promise.resolve(counts);
      return new Promise((resolve) => {
        release = () => resolve(counts);
      });
    };
    let now = 0;
    const { registry } = createMetrics({ stats, publishCommits: () => 0 }, undefined, () => now);

    const scrapes = [registry.metrics(), registry.metrics(), registry.metrics()];
    await new Promise((resolve) => setImmediate(resolve));
    expect(reads).toBe(1); // three scrapes, both gauges each: one read in flight
    release();
    for (const text of await Promise.all(scrapes)) {
      expect(text).toContain('linkhooks_queue_depth{status="pending"} 1');
      expect(text).toContain('linkhooks_disabled_endpoints 2');
    }

    now += STATS_MAX_AGE_MS - 1;
    await registry.metrics();
    expect(reads).toBe(1);

    // Stale: a read starts; the scrape waits for it STATS_WAIT_MS at most, then answers with the last.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const answered = async () => {
      let settled = false;
      const scrape = registry.metrics().finally(() => {
        settled = true;
      });
      await vi.advanceTimersByTimeAsync(STATS_WAIT_MS - 1);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      return scrape;
    };
    now += 1;
    expect(await answered()).toContain('linkhooks_queue_depth{status="pending"} 1');
    expect(reads).toBe(2);
    // A scrape while it runs starts no other.
    expect(await answered()).toContain('linkhooks_queue_depth{status="pending"} 1');
    expect(reads).toBe(2);
    release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(await registry.metrics()).toContain('linkhooks_queue_depth{status="pending"} 2');
    expect(reads).toBe(2);
    // A read that comes within the wait is answered (this one within the turn, before any timer).
    held = false;
    now += STATS_MAX_AGE_MS;
    expect(await registry.metrics()).toContain('linkhooks_queue_depth{status="pending"} 3');
  });

  it('answers with the last counts while reads fail, until they are too old to answer with', async () => {
    let reads = 0;
    let failing = false;
    const stats = async (): Promise<StoreStats> => {
      reads++;
      if (failing) throw new Error('the database is restarting');
      return { queued: { pending: reads, awaiting_retry: 0, held: 0 }, disabledEndpoints: 0 };
    };
    let now = 0;
    const { registry } = createMetrics({ stats, publishCommits: () => 0 }, undefined, () => now);
    expect(await registry.metrics()).toContain('linkhooks_queue_depth{status="pending"} 1');
    failing = true;
    now += STATS_MAX_AGE_MS;
    expect(await registry.metrics()).toContain('linkhooks_queue_depth{status="pending"} 1');
    expect(reads).toBe(2);
    now = STATS_STALE_LIMIT_MS;
    await expect(registry.metrics()).rejects.toThrow('the database is restarting');
    failing = false;
    expect(await registry.metrics()).toContain('linkhooks_queue_depth{status="pending"} 4');
  });
});
