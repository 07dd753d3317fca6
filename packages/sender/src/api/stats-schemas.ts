/** The request and response schemas of an endpoint's statistics (design D45). */
import { z } from 'zod';
import { DELIVERY_STATUSES } from '../domain/delivery-state.js';
import { STATS_BUCKETS, type StatsBucketName } from '../domain/stats-buckets.js';
import { DEFAULT_STATS_WINDOW, STATS_WINDOWS, type StatsWindowName } from '../engine/endpoint-stats.js';

const WINDOWS = Object.keys(STATS_WINDOWS) as [StatsWindowName, ...StatsWindowName[]];

export const statsQuery = z.strictObject({
  window: z
    .enum(WINDOWS, { error: `must be one of ${WINDOWS.join(', ')}` })
    .optional()
    .describe(`The window to count over, ending now: ${WINDOWS.join(', ')}; default ${DEFAULT_STATS_WINDOW}`),
});

const time = z.iso.datetime();
const count = z.number().int().min(0);

export const endpointStatsSchema = z
  .object({
    window: z.enum(WINDOWS),
    since: time.describe('Start of the window (inclusive)'),
    until: time.describe('End of the window (exclusive): now'),
    bucket: z
      .enum(STATS_BUCKETS.map((b) => b.name) as [StatsBucketName, ...StatsBucketName[]])
      .describe('The size of each bucket: five minutes in the 1h window, an hour up to 24h, a day beyond'),
    deliveries: z
      .object(Object.fromEntries(DELIVERY_STATUSES.map((s) => [s, count])) as Record<string, typeof count>)
      .describe('Deliveries created in the window, by their status now'),
    attempts: z
      .object({ total: count, succeeded: count, failed: count })
      .describe('Attempts started in the window, by outcome'),
    success_rate: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      .describe('Succeeded attempts over all attempts in the window; null without attempts'),
    latency_ms: z
      .object({ p50: count.nullable(), p95: count.nullable() })
      .describe("Percentiles of the window's attempt durations (nearest rank); null without attempts"),
    last_success_at: time.nullable().describe("The window's last succeeded attempt; null if none"),
    last_failure_at: time.nullable().describe("The window's last failed attempt; null if none"),
    buckets: z
      .array(
        z.object({
          start: time,
          succeeded: count,
          failed: count,
          latency_ms: z
            .object({ mean: count.nullable(), max: count.nullable() })
            .describe("The mean and the longest duration of the bucket's attempts; null without attempts"),
        }),
      )
      .describe('Attempts by outcome and their latency per bucket, oldest first, empty buckets included'),
  })
  .meta({ id: 'EndpointStats' });
