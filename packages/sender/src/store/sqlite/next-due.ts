/** When a worker should look again. */
import { CLAIMABLE_SQL } from '../sql-rules.js';
import type { SqliteDb } from './database.js';

/**
 * The earliest due time of an unleased delivery, or the earliest lease expiry (a crashed worker's
 * delivery comes back then). Two index walks, not a scan of the backlog: a million retries waiting
 * for later cost an idle worker nothing. Deliveries of a disabled or paused endpoint are `held`,
 * never claimable, so no join with endpoints is needed: those not held yet while its steps go on
 * (design D34), and those of an endpoint being deleted (D78), only make a worker look again sooner
 * than it needs to, for as long as the steps last.
 */
const NEXT_DUE = `
SELECT (SELECT d.next_attempt_at FROM deliveries d INDEXED BY deliveries_due
        WHERE d.status IN ${CLAIMABLE_SQL} AND d.lease_expires_at IS NULL
        ORDER BY d.next_attempt_at LIMIT 1) AS due,
       (SELECT min(d.lease_expires_at) FROM deliveries d INDEXED BY deliveries_leased
        WHERE d.lease_expires_at IS NOT NULL AND d.status IN ${CLAIMABLE_SQL}) AS leased`;

export function nextDueAt(db: SqliteDb): number | null {
  const { due, leased } = db.st(NEXT_DUE).get() as { due: number | null; leased: number | null };
  return due === null ? leased : leased === null ? due : Math.min(due, leased);
}
