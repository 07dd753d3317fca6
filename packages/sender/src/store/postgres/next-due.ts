/** When a worker should look again. */
import { CLAIMABLE_SQL } from '../sql-rules.js';
import type { Pg } from './connection.js';

/**
 * When the worker should look again: the earliest due time of an unleased delivery, or the
 * earliest lease expiry; two index walks rather than a scan of the backlog (as the SQLite store's
 * next-due.ts). `least` ignores a NULL side. "Unleased" is `NOT IN` the leases, a hashed set of
 * what is in flight that each row of the due-time walk probes, so the walk stays in due order.
 * Each lease's delivery is looked up by primary key (`OFFSET 0` keeps the lookup a subquery run
 * per lease): as a join, statistics taken while the queue was empty made PostgreSQL walk every
 * queued delivery and look for its lease (2.5 ms at 4,000 queued).
 * The due time is bounded on both sides (any due time is in that range) for a table without
 * statistics yet, as claim-due.ts explains.
 */
export const NEXT_DUE = `
SELECT least(
  (SELECT d.next_attempt_at FROM deliveries d
   WHERE d.status IN ${CLAIMABLE_SQL} AND d.next_attempt_at BETWEEN 0 AND ${Number.MAX_SAFE_INTEGER}
     AND d.id NOT IN (SELECT delivery_id FROM leases)
   ORDER BY d.next_attempt_at LIMIT 1),
  (SELECT min(l.expires_at) FROM leases l
   CROSS JOIN LATERAL (SELECT d.status FROM deliveries d WHERE d.id = l.delivery_id OFFSET 0) d
   WHERE d.status IN ${CLAIMABLE_SQL})
) AS at`;

export async function nextDueAt(pg: Pg): Promise<number | null> {
  const [row] = await pg.rows(NEXT_DUE, []);
  return row?.at === null || row?.at === undefined ? null : Number(row.at);
}
