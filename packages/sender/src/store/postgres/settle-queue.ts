/**
 * The PostgreSQL store's steps of moving an endpoint's deliveries toward its flags (queueMoves,
 * design D34). In one transaction, a backlog of 100,000 held the endpoint's row for seconds, and with it
 * every publish batch holding an event for it (every tenant's: publish.ts). Claims pass over a
 * listed endpoint that may not be attempted (claim-due.ts, full_endpoints).
 *
 * A step share-locks the endpoint first, as a publish does: a change of its flags waits for the
 * step, and lists the endpoint again after the step's commit, so a step never takes an endpoint off
 * the list with a change it has not seen. It then locks the listing, so one step of an endpoint runs
 * at a time, whichever process runs it. It passes over deliveries another transaction holds, so
 * only a fresh read that finds nothing left takes the endpoint off the list.
 */
import type pg from 'pg';
import {
  MOVED_AS,
  MOVED_FROM,
  NOTHING_MOVED,
  type QueueMove,
  type QueueMoved,
  queueMoves,
} from '../../domain/queue-moves.js';
import type { EndpointRef } from '../port.js';
import { RESUME_STATUS_SQL, sqlString } from '../sql-rules.js';
import type { Pg } from './connection.js';
import { madeClaimable } from './endpoint-due.js';

/**
 * The ids of up to `limit` of the endpoint `$1`'s deliveries in `statuses`, each status read on its
 * own (by the index by endpoint and status): with a list of statuses, or an order, and statistics
 * from before a pause (none held), the planner walked the due-time index of every endpoint
 * instead, or read the picked rows again for each row it updated. `lock`: locked for the move,
 * passing over rows another transaction holds (a record under way holds its delivery, then resets
 * its endpoint, which this step share-locks: waiting for the row made the two a deadlock); a later
 * step takes them.
 */
const pickedSql = (statuses: readonly string[], limit: string, lock: boolean) =>
  `${statuses
    .map(
      (status, i) =>
        `SELECT id FROM (SELECT id FROM deliveries WHERE endpoint_id = $1 AND status = ${sqlString(status)} LIMIT ${limit}${lock ? ' FOR UPDATE SKIP LOCKED' : ''}) AS s${i}`,
    )
    .join('\n  UNION ALL ')}\n  LIMIT ${limit}`;

/**
 * A move: `$1` the endpoint, `$2` the rows, `$3` now; a release's `$4`, the due time it gives
 * (NULL: their own). The picked rows are updated by key as an array read once (in id order, as
 * records take them). Their status is checked again as a condition no index serves (`IS TRUE`):
 * with statistics from before a pause (none held), the planner read the endpoint's held rows by
 * that condition instead, all of them at each step, and a resume of 500,000 ran for minutes.
 */
const moved = (set: string, move: QueueMove) => `
WITH moved AS (
  UPDATE deliveries SET ${set}, updated_at = $3
  WHERE id = ANY (ARRAY(${pickedSql(MOVED_FROM[move], '$2', true)}))
    AND (status IN (${MOVED_FROM[move].map(sqlString).join(', ')})) IS TRUE
  RETURNING next_attempt_at
)
SELECT count(*)::int AS n, min(next_attempt_at) AS at FROM moved`;

/**
 * Each move's statement. A release keeps each delivery's own due time (one due while paused goes
 * at once), or gives every one `$4`: a re-enabling makes them due now, their retries were held by
 * the disabling, not scheduled. Replayed skipped deliveries are due now.
 */
export const MOVES: Record<QueueMove, string> = {
  hold: moved(`status = 'held'`, 'hold'),
  release: moved(
    `status = ${RESUME_STATUS_SQL}, next_attempt_at = coalesce($4::bigint, next_attempt_at, $3)`,
    'release',
  ),
  'hold-skipped': moved(`status = 'held', next_attempt_at = $3`, 'hold-skipped'),
  replay: moved(`status = ${RESUME_STATUS_SQL}, next_attempt_at = $3`, 'replay'),
};

/**
 * Whether any delivery of the endpoint `$1` is left for `statuses`, read afresh (pickedSql's reads),
 * those another transaction holds included.
 */
export const leftToMoveSql = (statuses: readonly string[]) =>
  `SELECT EXISTS (${pickedSql(statuses, '1', false)}) AS left`;

/**
 * Lists the endpoint; `how` says what a listing already there keeps: a pause keeps what a
 * re-enabling asked; a disabling ends its replay (events for a disabled endpoint are skipped, and a
 * later re-enabling asks again); a resume's releases keep each delivery's own due time, a
 * re-enabling's are due at once.
 */
const LIST = {
  hold: `INSERT INTO endpoints_settling (id, account_id) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`,
  disable: `INSERT INTO endpoints_settling (id, account_id) VALUES ($1, $2)
            ON CONFLICT (id) DO UPDATE SET replay = false`,
  resume: `INSERT INTO endpoints_settling (id, account_id) VALUES ($1, $2)
           ON CONFLICT (id) DO UPDATE SET release_at = NULL`,
  reenable: `INSERT INTO endpoints_settling AS s (id, account_id, release_at, replay) VALUES ($1, $2, $3, $4)
             ON CONFLICT (id) DO UPDATE SET release_at = $3, replay = s.replay OR $4`,
};
/** First, as a publish does; a change of the flags waits for the step from here on. */
const SHARE_ENDPOINT = `SELECT 1 FROM endpoints WHERE id = $1 FOR SHARE`;
/**
 * After SHARE_ENDPOINT, in a statement of its own: its snapshot holds every change of the flags
 * committed before the lock, with the listing that change made. Locked: one step of the endpoint at
 * a time, whichever process runs it.
 */
const LISTED = `
SELECT s.release_at, s.replay, e.enabled, e.paused, e.deleted_at
FROM endpoints_settling s JOIN endpoints e ON e.id = s.id WHERE s.id = $1
FOR UPDATE OF s`;
const UNLIST = `DELETE FROM endpoints_settling WHERE id = $1`;
const SETTLING = `SELECT id, account_id FROM endpoints_settling ORDER BY id LIMIT $1`;

export type Listing = keyof typeof LIST;

/**
 * One step of the listed endpoint `id`, in the caller's transaction: each move its flags call for
 * in turn, `limit` rows in all, then off the list when fewer were left to move. `done` says it is
 * off the list (or was not on it).
 */
export async function moveStep(
  client: pg.PoolClient,
  schema: string,
  id: string,
  limit: number,
  now: number,
): Promise<QueueMoved & { done: boolean }> {
  await client.query(SHARE_ENDPOINT, [id]);
  const [listed] = (await client.query(LISTED, [id])).rows;
  // Off the list already: no change can list it again before this commits (SHARE_ENDPOINT).
  if (!listed) return { ...NOTHING_MOVED, done: true };
  if (listed.deleted_at !== null) {
    await client.query(UNLIST, [id]);
    return { ...NOTHING_MOVED, done: true };
  }
  const result = { ...NOTHING_MOVED };
  const moves = queueMoves(listed, listed.replay);
  let left = limit;
  let earliest: number | null = null;
  const releaseAt = listed.release_at === null ? null : Number(listed.release_at);
  for (const move of moves) {
    if (left === 0) break;
    const values = move === 'release' ? [id, left, now, releaseAt] : [id, left, now];
    const [row] = (await client.query(MOVES[move], values)).rows;
    const n = row.n as number;
    result[MOVED_AS[move]] += n;
    left -= n;
    if (n > 0 && (move === 'release' || move === 'replay')) {
      const at = Number(row.at);
      earliest = earliest === null ? at : Math.min(earliest, at);
    }
  }
  if (earliest !== null) await madeClaimable(client, schema, id, earliest);
  // Fewer moved than asked need not mean none is left: a row another transaction held was passed
  // over.
  const statuses = [...new Set(moves.flatMap((move) => MOVED_FROM[move]))];
  const done = left > 0 && !(await client.query(leftToMoveSql(statuses), [id])).rows[0].left;
  if (done) await client.query(UNLIST, [id]);
  return { ...result, done };
}

/** Lists the endpoint and makes the first step, in the transaction that changed its flags. */
export async function listAndMove(
  client: pg.PoolClient,
  schema: string,
  endpoint: { id: string; accountId: string },
  how: Listing,
  { now, limit, replay = false }: { now: number; limit: number; replay?: boolean },
): Promise<QueueMoved & { done: boolean }> {
  const values =
    how === 'reenable' ? [endpoint.id, endpoint.accountId, now, replay] : [endpoint.id, endpoint.accountId];
  await client.query(LIST[how], values);
  return moveStep(client, schema, endpoint.id, limit, now);
}

/** Run again if chosen as a deadlock victim (`tx`; connection.ts). */
export async function settleQueueStep(
  pg: Pg,
  id: string,
  limit: number,
  now: number,
): Promise<QueueMoved & { done: boolean }> {
  return pg.tx((client) => moveStep(client, pg.schema, id, limit, now));
}

export async function endpointsSettling(pg: Pg, limit: number): Promise<EndpointRef[]> {
  return (await pg.rows(SETTLING, [limit])).map((r) => ({
    id: String(r.id),
    accountId: String(r.account_id),
  }));
}
