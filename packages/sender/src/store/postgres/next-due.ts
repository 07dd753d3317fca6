/** When a worker should look again. */
import { CLAIMABLE_SQL } from '../sql-rules.js';
import type { Pg } from './connection.js';

/**
 * When the worker should look again: the earliest due time of an unleased delivery, or the
 * earliest lease expiry; two index walks rather than a scan of the backlog (as the SQLite store's next-due.ts).
 * `least` ignores a NULL side.
 */
const NEXT_DUE = `
SELECT least(
  (SELECT d.next_attempt_at FROM deliveries d
   WHERE d.status IN ${CLAIMABLE_SQL} AND d.next_attempt_at IS NOT NULL
     AND d.lease_expires_at IS NULL
   ORDER BY d.next_attempt_at LIMIT 1),
  (SELECT min(l.expires_at) FROM leases l
   JOIN deliveries d ON d.id = l.delivery_id AND d.status IN ${CLAIMABLE_SQL})
) AS at`;

export async function nextDueAt(pg: Pg): Promise<number | null> {
  const [row] = await pg.rows(NEXT_DUE, []);
  return row?.at === null || row?.at === undefined ? null : Number(row.at);
}
