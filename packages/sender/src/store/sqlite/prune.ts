/** Retention: final deliveries last updated before the cutoff go, with the events left without any. */
import { FINAL_SQL } from '../sql-rules.js';
import type { SqliteDb } from './database.js';

const PRUNE_DELIVERIES = `DELETE FROM deliveries WHERE status IN ${FINAL_SQL} AND updated_at < ?`;
const PRUNE_EVENTS = `
DELETE FROM events WHERE created_at < ? AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = events.id)`;

export function pruneBefore(db: SqliteDb) {
  return db.immediate((cutoff: number): number => {
    const removed = db.st(PRUNE_DELIVERIES).run(cutoff).changes;
    db.st(PRUNE_EVENTS).run(cutoff);
    return removed;
  });
}
