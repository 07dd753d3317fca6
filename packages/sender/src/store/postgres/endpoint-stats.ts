/**
 * An endpoint's statistics over a window (design D45), each statement bounded by the window on an
 * index of (endpoint, time) that includes the columns it reads, or (endpoint, status, id) for the
 * deliveries. The percentiles are computed in
 * SQL over the window's durations.
 */
import { DELIVERY_STATUSES, type DeliveryStatus } from '../../domain/delivery-state.js';
import { KEPT_ENDPOINT_SQL } from '../sql-rules.js';
import { bucketsOf, deliveryIdsOf, type StatsWindow, type WindowStats } from '../stats-port.js';
import type { Pg } from './connection.js';

const ENDPOINT_OF_ACCOUNT = `SELECT 1 FROM endpoints WHERE id = $1 AND account_id = $2 AND ${KEPT_ENDPOINT_SQL}`;
/** $1 endpoint, $2 since, $3 until, $4 bucket size. */
export const ATTEMPT_BUCKETS = `
SELECT (started_at - $2) / $4 AS bucket,
       count(*) FILTER (WHERE failure_kind IS NULL)::int AS succeeded,
       count(*) FILTER (WHERE failure_kind IS NOT NULL)::int AS failed,
       max(started_at) FILTER (WHERE failure_kind IS NULL) AS last_success,
       max(started_at) FILTER (WHERE failure_kind IS NOT NULL) AS last_failure,
       avg(duration_ms)::float8 AS mean_ms, max(duration_ms) AS max_ms
FROM attempts
WHERE endpoint_id = $1 AND started_at >= $2 AND started_at < $3
GROUP BY bucket`;
/** Nearest-rank percentiles (percentile_disc), as the SQLite store computes them. */
export const DURATION_PERCENTILES = `
SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY duration_ms) AS p50,
       percentile_disc(0.95) WITHIN GROUP (ORDER BY duration_ms) AS p95
FROM attempts
WHERE endpoint_id = $1 AND started_at >= $2 AND started_at < $3`;
/**
 * The deliveries made in the window by status: `$2` to `$3` the window's ids (an id starts with its
 * creation time), `$4` the statuses, each counted from its own range of the index.
 */
export const DELIVERIES_BY_STATUS = `
SELECT s.status,
       (SELECT count(*)::int FROM deliveries d
        WHERE d.endpoint_id = $1 AND d.status = s.status AND d.id >= $2 AND d.id < $3) AS n
FROM unnest($4::text[]) AS s (status)`;

export async function endpointStats(
  pg: Pg,
  accountId: string,
  endpointId: string,
  w: StatsWindow,
): Promise<WindowStats | null> {
  // One snapshot for every count (REPEATABLE READ), read-only.
  return pg.tx(async (client) => {
    await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
    if ((await client.query(ENDPOINT_OF_ACCOUNT, [endpointId, accountId])).rowCount === 0) return null;
    const range = [endpointId, w.since, w.until];
    const buckets = await client.query(ATTEMPT_BUCKETS, [...range, w.bucketMs]);
    const [latency] = (await client.query(DURATION_PERCENTILES, range)).rows;
    const deliveries: WindowStats['deliveries'] = {};
    const { fromId, untilId } = deliveryIdsOf(w);
    const counts = await client.query(DELIVERIES_BY_STATUS, [endpointId, fromId, untilId, DELIVERY_STATUSES]);
    for (const r of counts.rows) if (r.n > 0) deliveries[r.status as DeliveryStatus] = r.n as number;
    return {
      ...bucketsOf(buckets.rows),
      deliveries,
      p50Ms: latency?.p50 == null ? null : Number(latency.p50),
      p95Ms: latency?.p95 == null ? null : Number(latency.p95),
    };
  });
}
