/**
 * An endpoint's statistics over a window (design D45). Every statement names its index and
 * bounds it by the window: the cost is the window's rows, whatever the endpoint's history.
 */
import { DELIVERY_STATUSES } from '../../domain/delivery-state.js';
import type { Row } from '../rows.js';
import { KEPT_ENDPOINT_SQL } from '../sql-rules.js';
import { bucketsOf, deliveryIdsOf, nearestRank, type StatsWindow, type WindowStats } from '../stats-port.js';
import { countParam, type SqliteDb } from './database.js';

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

/** A read transaction: one snapshot for every count, and no write lock taken. */
export function endpointStats(db: SqliteDb) {
  return db.reading((accountId: string, endpointId: string, w: StatsWindow): WindowStats | null => {
    if (!db.st(ENDPOINT_OF_ACCOUNT).get({ accountId, endpointId })) return null;
    const range = { endpointId, since: w.since, until: w.until };
    const folded = bucketsOf(db.st(ATTEMPT_BUCKETS).all({ ...range, bucketMs: w.bucketMs }) as Row[]);
    const n = folded.buckets.reduce((sum, b) => sum + b.succeeded + b.failed, 0);
    const at = (p: number) => {
      if (n === 0) return null;
      const row = db.st(DURATION_AT_RANK).get({ ...range, offset: nearestRank(p, n) - 1 }) as Row;
      return row.duration_ms as number;
    };
    const deliveries: WindowStats['deliveries'] = {};
    const ids = { endpointId, ...deliveryIdsOf(w) };
    for (const status of DELIVERY_STATUSES) {
      const { n } = db.st(DELIVERIES_OF_STATUS).get({ ...ids, status }) as { n: number };
      if (n > 0) deliveries[status] = n;
    }
    return { ...folded, deliveries, p50Ms: at(0.5), p95Ms: at(0.95) };
  });
}
