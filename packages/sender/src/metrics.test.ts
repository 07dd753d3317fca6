import { describe, expect, it } from 'vitest';
import { createMetrics, STATS_MAX_AGE_MS } from './metrics.js';
import type { StoreStats } from './store/port.js';

describe('the store counts in /metrics', () => {
  it('reads the store once per STATS_MAX_AGE_MS however often it is scraped, and never twice at once', async () => {
    let reads = 0;
    let release: () => void = () => undefined;
    const stats = (): Promise<StoreStats> => {
      reads++;
      return new Promise((resolve) => {
        release = () =>
          resolve({ queued: { pending: reads, awaiting_retry: 0, held: 0 }, disabledEndpoints: 2 });
      });
    };
    let now = 0;
    const { registry } = createMetrics({ stats }, undefined, () => now);

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

    // Stale: the scrape answers with the last counts at once, and the next read starts behind it.
    now += 1;
    expect(await registry.metrics()).toContain('linkhooks_queue_depth{status="pending"} 1');
    expect(reads).toBe(2);
    // Scrapes while it runs neither wait for it nor start another.
    expect(await registry.metrics()).toContain('linkhooks_queue_depth{status="pending"} 1');
    expect(reads).toBe(2);
    release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(await registry.metrics()).toContain('linkhooks_queue_depth{status="pending"} 2');
    expect(reads).toBe(2);
  });

  it('keeps the last counts when a read fails, and reads again at the next scrape', async () => {
    let reads = 0;
    const stats = async (): Promise<StoreStats> => {
      reads++;
      if (reads === 2) throw new Error('the database is restarting');
      return { queued: { pending: reads, awaiting_retry: 0, held: 0 }, disabledEndpoints: 0 };
    };
    let now = 0;
    const { registry } = createMetrics({ stats }, undefined, () => now);
    expect(await registry.metrics()).toContain('linkhooks_queue_depth{status="pending"} 1');
    now += STATS_MAX_AGE_MS;
    expect(await registry.metrics()).toContain('linkhooks_queue_depth{status="pending"} 1');
    await new Promise((resolve) => setImmediate(resolve));
    expect(reads).toBe(2);
    expect(await registry.metrics()).toContain('linkhooks_queue_depth{status="pending"} 1');
    await new Promise((resolve) => setImmediate(resolve));
    expect(reads).toBe(3);
    expect(await registry.metrics()).toContain('linkhooks_queue_depth{status="pending"} 3');
  });
});
