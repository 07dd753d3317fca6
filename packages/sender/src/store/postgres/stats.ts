/** Counts for the metrics: deliveries by status and disabled endpoints. */
import type { StoreStats } from '../port.js';
import { toStats } from '../rows.js';
import type { Pg } from './connection.js';

const COUNT_BY_STATUS = `SELECT status, count(*)::int AS n FROM deliveries GROUP BY status`;
const COUNT_DISABLED = `SELECT count(*)::int AS n FROM endpoints WHERE NOT enabled`;

export async function stats(pg: Pg): Promise<StoreStats> {
  const [byStatus, [disabled]] = await Promise.all([
    pg.rows(COUNT_BY_STATUS, []),
    pg.rows(COUNT_DISABLED, []),
  ]);
  return toStats(byStatus, disabled?.n);
}
