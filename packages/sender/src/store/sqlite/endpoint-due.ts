/**
 * Each endpoint's next due time (migration 15): what a claim held up by one tenant's backlog reads
 * instead of every endpoint with queued deliveries (claim-due.ts). An entry is a lower bound: a
 * write that makes one of the endpoint's deliveries claimable, or due sooner, lowers it here; an
 * attempt, and a claim that finds nothing to take behind an entry, move it on when nothing of the
 * endpoint's is due any more (`settleDue`); a disabling drops it, and a pause leaves it for a
 * held-up claim to drop once nothing of the endpoint's is in flight (an attempt's settle may first).
 */
import { CLAIMABLE_STATUSES } from '../../domain/delivery-state.js';
import { CLAIMABLE_SQL, isQueuedSql, sqlString } from '../sql-rules.js';
import type { SqliteDb } from './database.js';

/** Writes nothing when the entry is already as early: the usual case, an endpoint with work due. */
const LOWER_DUE = `
INSERT INTO endpoint_due (endpoint_id, next_due_at) VALUES (?, ?)
ON CONFLICT (endpoint_id) DO UPDATE SET next_due_at = excluded.next_due_at
WHERE excluded.next_due_at < endpoint_due.next_due_at`;

/** Endpoint `endpointId` has a claimable delivery due at `at` (or made claimable at `at`). */
export function lowerDue(db: SqliteDb, endpointId: string, at: number): void {
  db.st(LOWER_DUE).run(endpointId, at);
}

/**
 * The earliest due time of the endpoint's claimable deliveries, leased ones included (a lease that
 * runs out makes its delivery claimable with no write), one seek per status; NULL when it has none.
 */
export const EARLIEST_DUE = `SELECT min(next_attempt_at) AS at FROM (${CLAIMABLE_STATUSES.map(
  (status) => `
  SELECT * FROM (SELECT next_attempt_at FROM deliveries INDEXED BY deliveries_queued_by_endpoint
                 WHERE endpoint_id = @endpointId AND status = ${sqlString(status)} AND ${isQueuedSql('status')}
                   AND next_attempt_at IS NOT NULL
                 ORDER BY next_attempt_at LIMIT 1)`,
).join('\n  UNION ALL')})`;
const SET_DUE = `UPDATE endpoint_due SET next_due_at = @at WHERE endpoint_id = @endpointId AND next_due_at <> @at`;
const DROP_DUE = `DELETE FROM endpoint_due WHERE endpoint_id = @endpointId`;

/**
 * When nothing of the endpoint's is due at `now` (its deliveries were attempted, held or put off),
 * moves its entry on to its earliest claimable delivery, or drops it when it has none; an endpoint
 * with something due keeps its entry as it is. Once per endpoint in each write transaction that
 * records its attempts (write-queue.ts), and by a claim that found nothing to take behind an entry.
 */
export function settleDue(db: SqliteDb, endpointId: string, now: number): void {
  const { at } = db.st(EARLIEST_DUE).get({ endpointId }) as { at: number | null };
  if (at === null) db.st(DROP_DUE).run({ endpointId });
  else if (at > now) db.st(SET_DUE).run({ endpointId, at });
}

/** Drops the entry of an endpoint that cannot be claimed from (disabled or paused): re-enabling and resuming lower it again. */
export function dropDue(db: SqliteDb, endpointId: string): void {
  db.st(DROP_DUE).run({ endpointId });
}

const REBUILD_DUE = [
  'DELETE FROM endpoint_due',
  `INSERT INTO endpoint_due (endpoint_id, next_due_at)
   SELECT endpoint_id, min(next_attempt_at) FROM deliveries INDEXED BY deliveries_queued_by_endpoint
   WHERE status IN ${CLAIMABLE_SQL} AND ${isQueuedSql('status')} AND next_attempt_at IS NOT NULL
   GROUP BY endpoint_id`,
];

/**
 * Every entry computed afresh from the queued deliveries, each endpoint's earliest claimable one:
 * at each start (migrate), so a file that an older version wrote to, which kept no entries, is
 * right again. One pass over the index of queued deliveries.
 */
export function rebuildDue(db: SqliteDb): void {
  for (const sql of REBUILD_DUE) db.exec(sql);
}
