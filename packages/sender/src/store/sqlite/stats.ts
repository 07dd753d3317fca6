/** Counts for the metrics: deliveries by status and disabled endpoints. */
import type { StoreStats } from '../port.js';
import { type Row, toStats } from '../rows.js';
import type { SqliteDb } from './database.js';

const COUNT_BY_STATUS = `SELECT status, count(*) AS n FROM deliveries GROUP BY status`;
const COUNT_DISABLED = `SELECT count(*) AS n FROM endpoints WHERE enabled = 0`;

export function stats(db: SqliteDb): StoreStats {
  const disabled = db.st(COUNT_DISABLED).get() as Row;
  return toStats(db.st(COUNT_BY_STATUS).all() as Row[], disabled.n);
}
