/**
 * Each endpoint's next due time (migration 19): what a claim held up by one tenant's backlog reads
 * instead of every endpoint with queued deliveries (claim-due.ts). An entry is a lower bound. A
 * write that makes one of the endpoint's deliveries claimable, or due sooner, lowers it in its own
 * transaction, holding a lock on the endpoint row (a publish's, a retry now's and a recovery's
 * share lock, a resume's and a re-enabling's update). Attempts leave it as it is: a held-up claim
 * names the entries it found with nothing behind them, and `settleDue` moves those on, or drops
 * them.
 *
 * Moving an entry on must not undo a lowering it cannot see: a publish that has inserted a delivery
 * but not committed. So `settleDue` first locks the endpoint rows, skipping those locked (a publish
 * or an operation on them is under way, and will leave the entry right), then reads each one's
 * earliest claimable delivery in a later statement, whose snapshot holds every write that committed
 * before the lock was granted. A publish that waits for that lock sees the entry as moved on: it
 * reads the entry with a lock (the newest version, not its snapshot's), and lowers it again.
 */

import type pg from 'pg';
import { CLAIMABLE_STATUSES } from '../../domain/delivery-state.js';
import { CLAIMABLE_SQL, QUEUED_SQL, sqlString } from '../sql-rules.js';
import { createBackgroundPass } from './background-pass.js';
import { NOTIFY_DUE, type Pg } from './connection.js';

/**
 * `$1` the endpoint, `$2` the due time of one of its deliveries made claimable. Run by a
 * transaction that holds a lock on the endpoint row. Writes nothing when the entry is as early.
 */
const LOWER_DUE = `
INSERT INTO endpoint_due (endpoint_id, next_due_at) VALUES ($1, $2)
ON CONFLICT (endpoint_id) DO UPDATE SET next_due_at = excluded.next_due_at
WHERE excluded.next_due_at < endpoint_due.next_due_at`;

/**
 * A write made deliveries of `endpointId` claimable, the earliest due at `at` (a resume, a recovery,
 * a retry now, a re-enabling; a publish does the same in its one statement): in the write's
 * transaction, which holds the endpoint row, its entry is lowered and the workers are woken when it
 * commits.
 */
export async function madeClaimable(
  client: pg.PoolClient,
  schema: string,
  endpointId: string,
  at: number,
): Promise<void> {
  await client.query(LOWER_DUE, [endpointId, at]);
  await client.query(NOTIFY_DUE, [schema]);
}

/**
 * Every entry lowered to its endpoint's earliest claimable delivery where it is later, or added
 * where missing, at each start (migrate, after the migrations' transaction): an older release, run
 * after this one's migration (a rollback), kept no entries for what it published. One pass over the
 * index of queued deliveries; only the endpoints and entries it lowers are locked (an endpoint
 * deleted meanwhile is passed over). Lowering to a time read from an older snapshot than a
 * settle's is harmless: the entry is early, and the next held-up claim settles it again.
 */
export const REPAIR_DUE = `
INSERT INTO endpoint_due (endpoint_id, next_due_at)
SELECT e.id, m.at
FROM (SELECT d.endpoint_id, min(d.next_attempt_at) AS at FROM deliveries d
      WHERE d.status IN ${CLAIMABLE_SQL} AND d.status IN ${QUEUED_SQL} AND d.next_attempt_at IS NOT NULL
      GROUP BY d.endpoint_id) m
JOIN endpoints e ON e.id = m.endpoint_id
WHERE NOT EXISTS (SELECT 1 FROM endpoint_due q WHERE q.endpoint_id = m.endpoint_id AND q.next_due_at <= m.at)
FOR KEY SHARE OF e
ON CONFLICT (endpoint_id) DO UPDATE SET next_due_at = excluded.next_due_at
WHERE excluded.next_due_at < endpoint_due.next_due_at`;

/** The endpoints of `$1` not locked by another transaction, locked until this one ends. */
const LOCK_ENDPOINTS = `
SELECT id FROM endpoints WHERE id = ANY ($1::text[]) ORDER BY id FOR NO KEY UPDATE SKIP LOCKED`;

/** The earliest due time of endpoint `e.id`'s claimable deliveries, leased ones included, a seek per status. */
const EARLIEST_DUE = `least(${CLAIMABLE_STATUSES.map(
  (status) => `
    (SELECT d.next_attempt_at FROM deliveries d
     WHERE d.endpoint_id = e.id AND d.status = ${sqlString(status)} AND d.status IN ${QUEUED_SQL}
       AND d.next_attempt_at IS NOT NULL
     ORDER BY d.next_attempt_at LIMIT 1)`,
).join(',')})`;

/**
 * For the endpoints of `$1` (locked): an entry is dropped when its endpoint cannot be claimed from
 * (disabled or paused: re-enabling and resuming lower it again) or has nothing claimable, and moved
 * on to its earliest claimable delivery when that is after `$2`; an endpoint with something due
 * keeps its entry (a leased delivery counts: its lease may run out with no write).
 */
export const SETTLE_DUE = `
WITH settled AS MATERIALIZED (
  SELECT e.id, e.enabled AND NOT e.paused AS live, ${EARLIEST_DUE} AS at
  FROM endpoints e WHERE e.id = ANY ($1::text[])
),
dropped AS (
  DELETE FROM endpoint_due q USING settled s
  WHERE q.endpoint_id = s.id AND (NOT s.live OR s.at IS NULL)
)
UPDATE endpoint_due q SET next_due_at = s.at
FROM settled s
WHERE q.endpoint_id = s.id AND s.live AND s.at > $2::bigint AND q.next_due_at <> s.at`;

/**
 * Settles the entries of `endpointIds` at `now` (see above); those whose endpoint another
 * transaction holds are left for a later claim. Returns how many endpoints it could lock.
 */
export async function settleDue(pg: Pg, endpointIds: string[], now: number): Promise<number> {
  return pg.tx(async (client) => {
    const locked = (await client.query(LOCK_ENDPOINTS, [endpointIds])).rows.map((r) => r.id as string);
    if (locked.length > 0) await client.query(SETTLE_DUE, [locked, now]);
    return locked.length;
  });
}

export interface DueSettler {
  /** settleDue, awaited: for a claim that took nothing, whose next round reads past the entries. */
  now(endpointIds: string[], now: number): Promise<number>;
  /**
   * settleDue in the background, one at a time (a settle under way drops the next): for a claim
   * that took deliveries, which go out without waiting for it. A failure is dropped, since an
   * entry left early costs the next held-up claim a read, nothing more.
   */
  later(endpointIds: string[], now: number): void;
  /** Stops settling and waits for a settle under way. */
  stop(): Promise<void>;
}

export function createDueSettler(pg: Pg): DueSettler {
  const background = createBackgroundPass();
  return {
    // After the background one, whose locks would make this one skip the same endpoints.
    now: async (endpointIds, now) => {
      await background.idle();
      return settleDue(pg, endpointIds, now);
    },
    later(endpointIds, now) {
      background.start(() => settleDue(pg, endpointIds, now));
    },
    stop: () => background.stop(),
  };
}
