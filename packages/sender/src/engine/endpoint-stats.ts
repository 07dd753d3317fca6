/**
 * An endpoint's statistics over a window (design D45): deliveries by status, attempts by outcome
 * in buckets for charts, the success rate and latency percentiles. Part of the engine: the API and
 * the library reach it through `createSender`.
 */
import type { Clock } from '../clock.js';
import type { DeliveryStatus } from '../domain/delivery-state.js';
import { DELIVERY_STATUSES } from '../domain/delivery-state.js';
import { type StatsBucketName, statsBucketOf } from '../domain/stats-buckets.js';
import { SenderError } from '../errors.js';
import type { ReadTurns } from '../limits/read-turns.js';
import type { SenderStore } from '../store/port.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** The windows one can ask for, and their length. */
export const STATS_WINDOWS = { '1h': HOUR, '24h': DAY, '7d': 7 * DAY, '30d': 30 * DAY } as const;

export type StatsWindowName = keyof typeof STATS_WINDOWS;
export const DEFAULT_STATS_WINDOW: StatsWindowName = '24h';

export interface StatsBucket {
  /** The bucket covers [start, start + the bucket size). */
  start: number;
  succeeded: number;
  failed: number;
  /** The mean and the longest duration of the bucket's attempts, in ms; null without attempts. */
  meanMs: number | null;
  maxMs: number | null;
}

export interface EndpointStats {
  window: StatsWindowName;
  /** The window: [since, until), epoch milliseconds; until is now. */
  since: number;
  until: number;
  /** The bucket: five minutes for 1 h, an hour up to 24 h, a day beyond (STATS_BUCKETS). */
  bucket: StatsBucketName;
  bucketMs: number;
  /** Deliveries created in the window, by their status now; every status is listed. */
  deliveries: Record<DeliveryStatus, number>;
  attempts: { total: number; succeeded: number; failed: number };
  /** Succeeded attempts over all attempts in the window (0..1); null without attempts. */
  successRate: number | null;
  /** Nearest-rank percentiles of the window's attempt durations, in ms; null without attempts. */
  latency: { p50Ms: number | null; p95Ms: number | null };
  /** The window's last succeeded and last failed attempt (their start); null if none in the window. */
  lastSuccessAt: number | null;
  lastFailureAt: number | null;
  /** Every bucket of the window in order, empty ones included. */
  buckets: StatsBucket[];
}

export interface EndpointStatsOperations {
  /**
   * The endpoint's statistics over the last `window` (default `24h`): what a dashboard charts.
   *
   * @example
   * const stats = await sender.endpointStats(accountId, endpointId, { window: '7d' });
   * console.log(stats.successRate, stats.latency.p95Ms, stats.buckets.length); // 7 daily buckets
   */
  endpointStats(accountId: string, id: string, options?: { window?: string }): Promise<EndpointStats>;
}

/** The window named `value`, or a 400 listing the ones there are. */
export function statsWindowOf(value: unknown): StatsWindowName {
  if (value === undefined) return DEFAULT_STATS_WINDOW;
  if (typeof value === 'string' && Object.hasOwn(STATS_WINDOWS, value)) return value as StatsWindowName;
  throw new SenderError(
    'invalid_request',
    `window must be one of ${Object.keys(STATS_WINDOWS).join(', ')} (default ${DEFAULT_STATS_WINDOW})`,
  );
}

export function endpointStatsOperations(deps: {
  store: SenderStore;
  clock: Clock;
  /** The statistics' reads, in turns by account (design D82). */
  reads: ReadTurns;
}): EndpointStatsOperations {
  return {
    async endpointStats(accountId, id, options = {}) {
      const window = statsWindowOf(options.window);
      const length = STATS_WINDOWS[window];
      const bucket = statsBucketOf(length);
      const bucketMs = bucket.ms;
      const until = deps.clock.now();
      const since = until - length;
      // A window's reads cost what it holds.
      const found = await deps.reads.run(accountId, () =>
        deps.store.endpointStats(accountId, id, { since, until, bucketMs }),
      );
      if (!found) throw new SenderError('not_found', `no endpoint ${id}`);
      const buckets: StatsBucket[] = Array.from({ length: length / bucketMs }, (_, i) => ({
        start: since + i * bucketMs,
        succeeded: 0,
        failed: 0,
        meanMs: null,
        maxMs: null,
      }));
      for (const { index, ...counts } of found.buckets) {
        const bucket = buckets[index];
        if (bucket) Object.assign(bucket, counts);
      }
      const succeeded = found.buckets.reduce((sum, b) => sum + b.succeeded, 0);
      const failed = found.buckets.reduce((sum, b) => sum + b.failed, 0);
      const total = succeeded + failed;
      const deliveries = Object.fromEntries(
        DELIVERY_STATUSES.map((s) => [s, found.deliveries[s] ?? 0]),
      ) as Record<DeliveryStatus, number>;
      return {
        window,
        since,
        until,
        bucket: bucket.name,
        bucketMs,
        deliveries,
        attempts: { total, succeeded, failed },
        successRate: total === 0 ? null : succeeded / total,
        latency: { p50Ms: found.p50Ms, p95Ms: found.p95Ms },
        lastSuccessAt: found.lastSuccessAt,
        lastFailureAt: found.lastFailureAt,
        buckets,
      };
    },
  };
}
