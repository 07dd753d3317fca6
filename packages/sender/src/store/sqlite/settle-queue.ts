/**
 * The SQLite store's steps of moving an endpoint's deliveries toward its flags (queueMoves, design
 * D34), on the event loop: one statement held it a second for a backlog of 100,000, so a step
 * moves at most SQLITE_STEP_ROWS. Claims pass over a disabled or paused endpoint's deliveries not
 * held yet (claim-due.ts joins the endpoint's flags).
 */
import {
  MOVED_AS,
  NOTHING_MOVED,
  type QueueMove,
  type QueueMoved,
  queueMoves,
} from '../../domain/queue-moves.js';
import type { EndpointRef } from '../port.js';
import type { Row } from '../rows.js';
import { CLAIMABLE_SQL, isQueuedSql, RESUME_STATUS_SQL } from '../sql-rules.js';
import { countParam, type SqliteDb } from './database.js';
import { lowerDue } from './endpoint-due.js';
import { sqliteStepRows } from './step-rows.js';

/** The rows of the endpoint's queued deliveries (or skipped ones) of `status`, at most `@limit`. */
const queuedOf = (status: string) => `
  SELECT rowid FROM deliveries INDEXED BY deliveries_queued_by_endpoint
  WHERE endpoint_id = @id AND ${status} AND ${isQueuedSql('status')} LIMIT ${countParam('limit')}`;
const skippedOf = `
  SELECT rowid FROM deliveries INDEXED BY deliveries_skipped
  WHERE endpoint_id = @id AND status = 'skipped' LIMIT ${countParam('limit')}`;

/**
 * Each move's statement. A release keeps each delivery's own due time (one due while paused goes
 * at once), or gives every one `@releaseAt`: a re-enabling makes them due now, their retries were
 * held by the disabling, not scheduled. Replayed skipped deliveries are due now.
 */
export const MOVES: Record<QueueMove, string> = {
  hold: `UPDATE deliveries SET status = 'held', updated_at = @now
         WHERE rowid IN (${queuedOf(`status IN ${CLAIMABLE_SQL}`)})`,
  release: `UPDATE deliveries
            SET status = ${RESUME_STATUS_SQL}, next_attempt_at = coalesce(@releaseAt, next_attempt_at, @now), updated_at = @now
            WHERE rowid IN (${queuedOf(`status = 'held'`)})`,
  'hold-skipped': `UPDATE deliveries SET status = 'held', next_attempt_at = @now, updated_at = @now
                   WHERE rowid IN (${skippedOf})`,
  replay: `UPDATE deliveries SET status = ${RESUME_STATUS_SQL}, next_attempt_at = @now, updated_at = @now
           WHERE rowid IN (${skippedOf})`,
};

/**
 * Lists the endpoint; `how` says what a listing already there keeps: a pause keeps what a
 * re-enabling asked; a disabling ends its replay (events for a disabled endpoint are skipped, and a
 * later re-enabling asks again); a resume's releases keep each delivery's own due time, a
 * re-enabling's are due at once.
 */
const LIST = {
  hold: `INSERT INTO endpoints_settling (id, account_id) VALUES (@id, @accountId) ON CONFLICT (id) DO NOTHING`,
  disable: `INSERT INTO endpoints_settling (id, account_id) VALUES (@id, @accountId)
            ON CONFLICT (id) DO UPDATE SET replay = 0`,
  resume: `INSERT INTO endpoints_settling (id, account_id) VALUES (@id, @accountId)
           ON CONFLICT (id) DO UPDATE SET release_at = NULL`,
  reenable: `INSERT INTO endpoints_settling (id, account_id, release_at, replay) VALUES (@id, @accountId, @now, @replay)
             ON CONFLICT (id) DO UPDATE SET release_at = @now, replay = replay OR @replay`,
};
const LISTED = `
SELECT s.release_at, s.replay, e.enabled, e.paused, e.deleted_at
FROM endpoints_settling s JOIN endpoints e ON e.id = s.id WHERE s.id = ?`;
const UNLIST = `DELETE FROM endpoints_settling WHERE id = ?`;
const SETTLING = `SELECT id, account_id FROM endpoints_settling ORDER BY id LIMIT ${countParam('limit')}`;

export type Listing = keyof typeof LIST;

/**
 * One step of the listed endpoint `id`, in the caller's transaction: each move its flags call for
 * in turn, `limit` rows in all, then off the list when fewer were left to move. `done` says it is
 * off the list (or was not on it).
 */
export function moveStep(
  db: SqliteDb,
  id: string,
  limit: number,
  now: number,
): QueueMoved & { done: boolean } {
  const listed = db.st(LISTED).get(id) as Row | undefined;
  if (!listed || listed.deleted_at !== null) {
    db.st(UNLIST).run(id);
    return { ...NOTHING_MOVED, done: true };
  }
  const rows = sqliteStepRows(limit);
  const moved = { ...NOTHING_MOVED };
  const flags = { enabled: listed.enabled === 1, paused: listed.paused === 1 };
  let left = rows;
  for (const move of queueMoves(flags, listed.replay === 1)) {
    if (left === 0) break;
    const params = { id, now, limit: left, releaseAt: listed.release_at ?? null };
    const n = db.st(MOVES[move]).run(params).changes;
    moved[MOVED_AS[move]] += n;
    left -= n;
  }
  // Made claimable at `now` at the latest (a held delivery due later keeps its own time, and the
  // entry is a lower bound: endpoint-due.ts).
  if (moved.released + moved.replayed > 0) lowerDue(db, id, now);
  if (left > 0) db.st(UNLIST).run(id);
  return { ...moved, done: left > 0 };
}

/** Lists the endpoint and makes the first step, in the transaction that changed its flags. */
export function listAndMove(
  db: SqliteDb,
  endpoint: { id: string; accountId: string },
  how: Listing,
  { now, limit, replay = false }: { now: number; limit: number; replay?: boolean },
): QueueMoved & { done: boolean } {
  db.st(LIST[how]).run({ id: endpoint.id, accountId: endpoint.accountId, now, replay: replay ? 1 : 0 });
  return moveStep(db, endpoint.id, limit, now);
}

export function settleQueueStep(db: SqliteDb) {
  return db.immediate((id: string, limit: number, now: number) => moveStep(db, id, limit, now));
}

export function endpointsSettling(db: SqliteDb, limit: number): EndpointRef[] {
  return (db.st(SETTLING).all({ limit }) as { id: string; account_id: string }[]).map((r) => ({
    id: r.id,
    accountId: r.account_id,
  }));
}
