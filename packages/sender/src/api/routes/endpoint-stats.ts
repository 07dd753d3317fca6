/** An endpoint's statistics over a window, for charts (design D45). */
import type { z } from 'zod';
import type { EndpointStats } from '../../engine/endpoint-stats.js';
import { READS_PER_ACCOUNT } from '../../limits/read-turns.js';
import { defineRoute } from '../route.js';
import { errorSchema } from '../schemas.js';
import { endpointStatsSchema, statsQuery } from '../stats-schemas.js';

const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

export function endpointStatsJson(s: EndpointStats): z.infer<typeof endpointStatsSchema> {
  return {
    window: s.window,
    since: iso(s.since),
    until: iso(s.until),
    bucket: s.bucket,
    deliveries: s.deliveries,
    attempts: s.attempts,
    success_rate: s.successRate,
    latency_ms: { p50: s.latency.p50Ms, p95: s.latency.p95Ms },
    last_success_at: isoOrNull(s.lastSuccessAt),
    last_failure_at: isoOrNull(s.lastFailureAt),
    buckets: s.buckets.map((b) => ({
      start: iso(b.start),
      succeeded: b.succeeded,
      failed: b.failed,
      latency_ms: { mean: b.meanMs, max: b.maxMs },
    })),
  };
}

export const endpointStatsRoute = defineRoute<undefined, z.infer<typeof statsQuery>>({
  method: 'get',
  path: '/v1/endpoints/:id/stats',
  summary: 'Deliveries, attempts, success rate and latency over a window, with buckets for charts',
  tag: 'Endpoints',
  auth: 'account',
  query: statsQuery,
  responses: {
    200: { description: "The endpoint's statistics over the window", schema: endpointStatsSchema },
    400: { description: 'window is not one of 1h, 24h, 7d, 30d', schema: errorSchema },
    404: { description: 'No such endpoint in this account', schema: errorSchema },
    429: {
      description: `The account already has ${READS_PER_ACCOUNT} statistics requests being answered or waiting (\`rate_limited\`); Retry-After says when to ask again`,
      schema: errorSchema,
    },
  },
  async handle({ sender, account, params, query }) {
    const stats = await sender.endpointStats(account.id, params.id!, {
      ...(query.window ? { window: query.window } : {}),
    });
    return { status: 200, json: endpointStatsJson(stats) };
  },
});
