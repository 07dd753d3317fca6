/**
 * An endpoint's statistics over a window (design D45). Every statement names its index and
 * bounds it by the window: the cost is the window's rows, whatever the endpoint's history. A busy
 * endpoint's month is millions of rows (1.3 million attempts: 2.3 s), so they are read off the
 * event loop (off-loop-reads.ts, design D80).
 */
import { DELIVERY_STATUSES } from '../../domain/delivery-state.js';
import type { Row } from '../rows.js';
import { KEPT_ENDPOINT_SQL } from '../sql-rules.js';
import { bucketsOf, deliveryIdsOf, nearestRank, type StatsWindow, type WindowStats } from '../stats-port.js';
import { countParam } from './database.js';
import type { OffLoopReads } from './off-loop-reads.js';

const ENDPOINT_OF_ACCOUNT = `SELECT 1 FROM endpoints WHERE id = @endpointId AND account_id = @accountId AND ${KEPT_ENDPOINT_SQL}`;
/**
 * Attempts by bucket and outcome; the index holds every column read (a covering scan). The CAST:
 * numbers bound from JavaScript are REAL, whose division would not cut the window into buckets.
 */
export const ATTEMPT_BUCKETS = `
SELECT CAST((started_at - @since) / @bucketMs AS INTEGER) AS bucket,
       sum(failure_kind IS NULL) AS succeeded, sum(failure_kind IS NOT NULL) AS failed,
       max(CASE WHEN failure_kind IS NULL THEN started_at END) AS last_success,
       max(CASE WHEN failure_kind IS NOT NULL THEN started_at END) AS last_failure,
       avg(duration_ms) AS mean_ms, max(duration_ms) AS max_ms
FROM attempts INDEXED BY attempts_by_endpoint
WHERE endpoint_id = @endpointId AND started_at >= @since AND started_at < @until
GROUP BY bucket`;
/** The duration at one rank: SQLite keeps only `rank` rows in the sorter. */
export const DURATION_AT_RANK = `
SELECT duration_ms FROM attempts INDEXED BY attempts_by_endpoint
WHERE endpoint_id = @endpointId AND started_at >= @since AND started_at < @until
ORDER BY duration_ms LIMIT 1 OFFSET ${countParam('offset')}`;
/** The deliveries of one status made in the window: their ids, which start with their creation time. */
export const DELIVERIES_OF_STATUS = `
SELECT count(*) AS n FROM deliveries INDEXED BY deliveries_by_endpoint
WHERE endpoint_id = @endpointId AND status = @status AND id >= @fromId AND id < @untilId`;

/**
 * The counts and buckets in one snapshot; the two percentiles, which need the count of attempts
 * first, in a second. An attempt recorded or pruned between the two moves a percentile by its one
 * rank at most; one whose rank is gone reads as none.
 */
export function endpointStats(reads: OffLoopReads) {
  return async (accountId: string, endpointId: string, w: StatsWindow): Promise<WindowStats | null> => {
    const range = { endpointId, since: w.since, until: w.until };
    const ids = { endpointId, ...deliveryIdsOf(w) };
    const [endpoint, bucketRows, ...statusRows] = await reads.snapshot([
      { sql: ENDPOINT_OF_ACCOUNT, params: { accountId, endpointId } },
      { sql: ATTEMPT_BUCKETS, params: { ...range, bucketMs: w.bucketMs }, all: true },
      ...DELIVERY_STATUSES.map((status) => ({ sql: DELIVERIES_OF_STATUS, params: { ...ids, status } })),
    ]);
    if (!endpoint) return null;
    const folded = bucketsOf(bucketRows as Row[]);
    const n = folded.buckets.reduce((sum, b) => sum + b.succeeded + b.failed, 0);
    const deliveries: WindowStats['deliveries'] = {};
    for (const [i, status] of DELIVERY_STATUSES.entries()) {
      const count = (statusRows[i] as { n: number }).n;
      if (count > 0) deliveries[status] = count;
    }
    const ranked =
      n === 0
        ? []
        : await reads.snapshot(
            [0.5, 0.95].map((p) => ({
              sql: DURATION_AT_RANK,
              params: { ...range, offset: nearestRank(p, n) - 1 },
            })),
          );
    const at = (i: number) => ((ranked[i] as Row | undefined)?.duration_ms as number | undefined) ?? null;
    return { ...folded, deliveries, p50Ms: at(0), p95Ms: at(1) };
  };
}
