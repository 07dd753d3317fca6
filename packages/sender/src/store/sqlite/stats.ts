/**
 * Counts for the metrics: queued deliveries by status and disabled endpoints, each from a partial
 * index, so a scrape costs what is queued, never the size of the log; read off the event loop
 * (off-loop-reads.ts), since what is queued may be millions.
 */
import { QUEUED_STATUSES } from '../../domain/delivery-state.js';
import type { StoreStats } from '../port.js';
import { type Row, toStats } from '../rows.js';
import { isQueuedSql, KEPT_ENDPOINT_SQL } from '../sql-rules.js';
import type { OffLoopReads } from './off-loop-reads.js';

/**
 * One pass over the per-endpoint index of queued deliveries, each status summed as it goes: that
 * index leads with the endpoint, so a GROUP BY status would sort every queued row first (held
 * ones pile up behind a disabled endpoint), on the event loop.
 */
export const COUNT_QUEUED = `
SELECT ${QUEUED_STATUSES.map((s) => `coalesce(sum(status = '${s}'), 0) AS ${s}`).join(', ')}
FROM deliveries INDEXED BY deliveries_queued_by_endpoint WHERE ${isQueuedSql('status')}`;
const COUNT_DISABLED = `SELECT count(*) AS n FROM endpoints INDEXED BY endpoints_disabled WHERE enabled = 0 AND ${KEPT_ENDPOINT_SQL}`;

export async function stats(reads: OffLoopReads): Promise<StoreStats> {
  // Aggregates without GROUP BY: one row each, always; both of one snapshot.
  const [disabled, counts] = (await reads.snapshot([{ sql: COUNT_DISABLED }, { sql: COUNT_QUEUED }])) as [
    Row,
    Row,
  ];
  return toStats(
    QUEUED_STATUSES.map((status) => ({ status, n: counts[status] })),
    disabled.n,
  );
}
