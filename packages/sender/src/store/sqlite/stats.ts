/**
 * Counts for the metrics: queued deliveries by status and disabled endpoints, each from a partial
 * index, so a scrape costs what is queued, never the size of the log.
 */
import { QUEUED_STATUSES } from '../../domain/delivery-state.js';
import type { StoreStats } from '../port.js';
import { type Row, toStats } from '../rows.js';
import { isQueuedSql, KEPT_ENDPOINT_SQL } from '../sql-rules.js';
import type { SqliteDb } from './database.js';

/**
 * One pass over the per-endpoint index of queued deliveries, each status summed as it goes: that
 * index leads with the endpoint, so a GROUP BY status would sort every queued row first (held
 * ones pile up behind a disabled endpoint), on the event loop.
 */
export const COUNT_QUEUED = `
SELECT ${QUEUED_STATUSES.map((s) => `coalesce(sum(status = '${s}'), 0) AS ${s}`).join(', ')}
FROM deliveries INDEXED BY deliveries_queued_by_endpoint WHERE ${isQueuedSql('status')}`;
const COUNT_DISABLED = `SELECT count(*) AS n FROM endpoints INDEXED BY endpoints_disabled WHERE enabled = 0 AND ${KEPT_ENDPOINT_SQL}`;

export function stats(db: SqliteDb): StoreStats {
  const disabled = db.st(COUNT_DISABLED).get() as Row;
  const counts = db.st(COUNT_QUEUED).get() as Row;
  return toStats(
    QUEUED_STATUSES.map((status) => ({ status, n: counts[status] })),
    disabled.n,
  );
}
