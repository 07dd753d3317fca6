/**
 * Counts for the metrics: queued deliveries by status and disabled endpoints, each from a partial
 * index, so a scrape costs what is queued, never the size of the log.
 */
import type { StoreStats } from '../port.js';
import { toStats } from '../rows.js';
import { KEPT_ENDPOINT_SQL, QUEUED_SQL } from '../sql-rules.js';
import type { Pg } from './connection.js';

export const COUNT_QUEUED = `SELECT status, count(*)::int AS n FROM deliveries WHERE status IN ${QUEUED_SQL} GROUP BY status`;
const COUNT_DISABLED = `SELECT count(*)::int AS n FROM endpoints WHERE NOT enabled AND ${KEPT_ENDPOINT_SQL}`;

export async function stats(pg: Pg): Promise<StoreStats> {
  const [queued, [disabled]] = await Promise.all([pg.rows(COUNT_QUEUED, []), pg.rows(COUNT_DISABLED, [])]);
  return toStats(queued, disabled?.n);
}
