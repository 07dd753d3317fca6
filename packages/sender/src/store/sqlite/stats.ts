/**
 * Counts for the metrics: queued deliveries by status and disabled endpoints, each from a partial
 * index (the queued ones from the per-endpoint index of them, which holds their status), so a scrape
 * costs what is queued, never the size of the log.
 */
import type { StoreStats } from '../port.js';
import { type Row, toStats } from '../rows.js';
import { QUEUED_SQL } from '../sql-rules.js';
import type { SqliteDb } from './database.js';

export const COUNT_QUEUED = `
SELECT status, count(*) AS n FROM deliveries INDEXED BY deliveries_queued_by_endpoint WHERE status IN ${QUEUED_SQL} GROUP BY status`;
const COUNT_DISABLED = `SELECT count(*) AS n FROM endpoints INDEXED BY endpoints_disabled WHERE enabled = 0`;

export function stats(db: SqliteDb): StoreStats {
  const disabled = db.st(COUNT_DISABLED).get() as Row;
  return toStats(db.st(COUNT_QUEUED).all() as Row[], disabled.n);
}
