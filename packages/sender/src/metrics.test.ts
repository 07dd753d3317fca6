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

    now += 1;
    const later = registry.metrics();
    await new Promise((resolve) => setImmediate(resolve));
    release();
    expect(await later).toContain('linkhooks_queue_depth{status="pending"} 2');
    expect(reads).toBe(2);
  });
});
