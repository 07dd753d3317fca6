/**
 * The claim (design I3, I6): leases a batch of due deliveries in one statement, or more when its
 * walk is held up (createClaimer).
 */
import { CLAIMABLE_STATUSES } from '../../domain/delivery-state.js';
import { ownBytes } from '../../own-bytes.js';
import { LARGE_BODY_BYTES } from '../../turn-budget.js';
import {
  claimWalk,
  claimWindow,
  headsPerEndpoint,
  IN_FLIGHT_WALKS,
  nothingToClaim,
  turnEndpointsPerAccount,
} from '../claim-window.js';
import { nextTurnCursor, splitAccountAtOrigin } from '../pick-due.js';
import type { ClaimedTurn, ClaimRequest, ClaimShares, TurnRequest } from '../port.js';
import type { ClaimedDelivery } from '../records.js';
import { bodiesOf, leaseOfRow, type Row, toClaimed } from '../rows.js';
import { attemptColumnsSql, CLAIMABLE_SQL, QUEUED_SQL } from '../sql-rules.js';
import type { Pg } from './connection.js';
import type { DueSettler } from './endpoint-due.js';
import { releaseLeases } from './release-lease.js';

/**
 * The delivery's columns a claim answers with, of the row named `d`: `locked` reads them from the
 * table, `claimed` from `picked` (each names its source `d` for them).
 */
export const CLAIMED_COLUMNS = [
  'id',
  'event_id',
  'endpoint_id',
  'account_id',
  'event_name',
  'status',
  'attempts',
  'next_attempt_at',
  'last_failure_kind',
  'last_status_code',
  'test',
  'created_at',
  'updated_at',
]
  .map((column) => `d.${column}`)
  .join(', ');

/** The claimable deliveries due by `$1`, in due order, from the due-time index (`d`). */
const DUE_IN_ORDER = `
FROM deliveries d
WHERE d.status IN ${CLAIMABLE_SQL} AND d.next_attempt_at BETWEEN 0 AND $1::bigint
ORDER BY d.next_attempt_at`;

/**
 * What a claim may not take (design I6, D25): the statements' first part, the leases live, what is
 * in flight per endpoint, and the endpoints and accounts at their limits.
 */
const LIMITS = `
live AS MATERIALIZED (SELECT delivery_id, endpoint_id, token FROM leases WHERE expires_at > $1::bigint),
inflight AS (
  SELECT endpoint_id, count(*) AS n FROM live
  WHERE (delivery_id, token) NOT IN (SELECT * FROM unnest($6::text[], $7::text[]))
  GROUP BY endpoint_id
),
held_accounts AS (SELECT * FROM unnest($8::text[], $9::int[]) AS h (account_id, n)),
held_origins AS (SELECT * FROM unnest($10::text[], $11::int[]) AS h (origin, n)),
endpoint_caps AS (SELECT * FROM unnest($14::text[], $15::int[]) AS c (endpoint_id, cap)),
origin_caps AS (SELECT * FROM unnest($16::text[], $17::int[]) AS c (origin, cap)),
held_at_origins AS (SELECT * FROM unnest($22::text[], $23::text[], $24::int[]) AS h (account_id, origin, n)),
-- The caps of accounts at origins, in place of $25 (ClaimShares' capped.accountsAtOrigins), each
-- keyed as accountAtOrigin keys it: the origin, a space, the account (splitAccountAtOrigin).
pair_caps AS (
  SELECT split_part(c.k, ' ', 1) AS origin, substr(c.k, strpos(c.k, ' ') + 1) AS account_id, c.cap
  FROM unnest($18::text[], $19::int[]) AS c (k, cap)
),
full_endpoints AS (
  SELECT endpoint_id FROM inflight WHERE n >= $3::int
  UNION ALL
  SELECT c.endpoint_id FROM endpoint_caps c LEFT JOIN inflight i ON i.endpoint_id = c.endpoint_id
  WHERE coalesce(i.n, 0) >= c.cap
  UNION ALL
  -- An origin at its share (its own cap, or else the one for all).
  SELECT e.id FROM endpoints e WHERE e.origin IN (
    SELECT h.origin FROM held_origins h LEFT JOIN origin_caps c ON c.origin = h.origin
    WHERE c.cap IS NULL AND h.n >= $13::int
    UNION ALL
    SELECT c.origin FROM origin_caps c LEFT JOIN held_origins h ON h.origin = c.origin
    WHERE coalesce(h.n, 0) >= c.cap)
  UNION ALL
  -- An account's endpoints at an origin where it is at its share there (its own cap there, or
  -- else the one for all), by the endpoints' index by account.
  SELECT e.id FROM held_at_origins h JOIN endpoints e ON e.account_id = h.account_id AND e.origin = h.origin
  LEFT JOIN pair_caps c ON c.account_id = h.account_id AND c.origin = h.origin
  WHERE c.cap IS NULL AND h.n >= $25::int
  UNION ALL
  SELECT e.id FROM pair_caps c JOIN endpoints e ON e.account_id = c.account_id AND e.origin = c.origin
  LEFT JOIN held_at_origins h ON h.account_id = c.account_id AND h.origin = c.origin
  WHERE coalesce(h.n, 0) >= c.cap
  UNION ALL
  -- Endpoints being deleted (design D78): disabled, but their due deliveries are not held, so the
  -- walk steps past them as past a full endpoint's, and a claim behind them reads past its walk.
  SELECT id FROM endpoints_being_deleted
  UNION ALL
  -- Endpoints disabled or paused whose deliveries are still being held (settle-queue.ts): passed
  -- over the same way until the last is held.
  SELECT s.id FROM endpoints_settling s JOIN endpoints e ON e.id = s.id WHERE NOT e.enabled OR e.paused
),
full_accounts AS (SELECT account_id FROM held_accounts WHERE n >= $12::int)
`;

/** The walk: the due rows up to its bound, past what may not be taken (LIMITS before it). */
const WALK = `
${LIMITS},
-- walkSteps: the walk's bound, and a step more for each delivery in flight.
walk_steps AS MATERIALIZED (
  SELECT $21::int + least(count(*), ${IN_FLIGHT_WALKS} * $21::int)::int AS n FROM live
),
walked AS (
  SELECT f.id, f.endpoint_id, f.account_id, f.next_attempt_at
  FROM (SELECT d.id, d.endpoint_id, d.account_id, d.next_attempt_at ${DUE_IN_ORDER} LIMIT (SELECT n FROM walk_steps)) f
  WHERE f.id NOT IN (SELECT delivery_id FROM live)
    AND f.endpoint_id NOT IN (SELECT endpoint_id FROM full_endpoints)
    AND f.account_id NOT IN (SELECT account_id FROM full_accounts)
  ORDER BY f.next_attempt_at
  LIMIT $5::int
)
`;
/** Whether the walk was cut short with due rows past its bound (decided once per statement). */
const HELD_UP = `
held_up AS MATERIALIZED (
  -- CASE: the walk's count first, the read past its bound only when it came up short.
  SELECT 1 WHERE CASE WHEN (SELECT count(*) FROM walked) < $5::int
                      THEN EXISTS (SELECT 1 ${DUE_IN_ORDER} OFFSET (SELECT n FROM walk_steps) LIMIT 1) END
)
`;
/**
 * A claim with the accounts in turn reads the first `$27` (turnEndpointsPerAccount) of each
 * account's endpoints with something due, the earliest due first, for `$2` accounts: those whose id
 * comes after the turn's cursor `$28` (TurnRequest's `after`), then from the first id on, in byte order
 * (as inTurnOrder compares them), as the SQLite store's turnEndpoints picks them.
 */
const TURN_ENDPOINTS = `
turn_endpoints AS MATERIALIZED (
  SELECT t.id, t.live, t.account_id FROM (
    SELECT f.*, dense_rank() OVER (
      ORDER BY f.account_id <= $28::text, f.account_id
    ) AS account_turn
    FROM (
      SELECT q.id, q.live, q.account_id,
             row_number() OVER (PARTITION BY q.account_id ORDER BY q.next_due_at, q.id) AS rn_endpoint
      FROM due_endpoints q WHERE q.live
    ) f
    WHERE f.rn_endpoint <= $27::int
  ) t
  WHERE t.account_turn <= $2::int
),`;

/**
 * The entry (endpoint-due.ts) of the endpoint `id`, due by `$1`, as `q`, and the endpoint, as `e`:
 * each by key, the LIMITs keeping them lookups.
 */
const dueEntryAndEndpoint = (id: string) => `CROSS JOIN LATERAL (
    SELECT q.next_due_at FROM endpoint_due q
    WHERE q.endpoint_id = ${id} AND q.next_due_at BETWEEN 0 AND $1::bigint LIMIT 1
  ) q
  CROSS JOIN LATERAL (
    SELECT e.id, e.account_id, e.enabled, e.paused FROM endpoints e WHERE e.id = ${id} LIMIT 1
  ) e`;

/**
 * For a turn, the endpoints with something due among the first `$21` endpoints in account-id order
 * after the turn's cursor `$28`, then from the first id on (in byte order, as inTurnOrder), by the
 * endpoints' index by account and each one's entry by key, those `idle_due` has not read: `$27` of
 * each account's, for as many accounts as make `$2` × `$27` (as many as the turn reads:
 * TURN_ENDPOINTS), the first in that order. The accounts a turn takes next are read so, whatever is
 * due before them: `idle_due` alone, in due order, read none past its `$21` entries, so tenants with
 * more endpoints than that, all due first, kept every other one out of the turns until their
 * backlogs had gone out. Endpoints with nothing due cost a step each, so the read stays bounded
 * however many endpoints there are.
 */
const AFTER_CURSOR = `after_cursor AS (
  SELECT a.id, a.live, a.account_id, a.next_due_at FROM (
    SELECT e.id, true AS live, e.account_id, q.next_due_at, w.part,
           row_number() OVER (PARTITION BY e.account_id ORDER BY e.id) AS rn
    FROM (
      (SELECT e.id, 0 AS part FROM endpoints e WHERE e.account_id > $28::text
       ORDER BY e.account_id, e.id LIMIT $21::int)
      UNION ALL
      (SELECT e.id, 1 AS part FROM endpoints e WHERE e.account_id <= $28::text
       ORDER BY e.account_id, e.id LIMIT $21::int)
      LIMIT $21::int
    ) w
    ${dueEntryAndEndpoint('w.id')}
    WHERE e.id NOT IN (SELECT endpoint_id FROM full_endpoints)
      AND e.account_id NOT IN (SELECT account_id FROM full_accounts)
      AND e.id NOT IN (SELECT endpoint_id FROM live)
      AND e.enabled AND NOT e.paused
  ) a
  WHERE a.rn <= $27::int
  ORDER BY a.part, a.account_id, a.id
  LIMIT $2::int * $27::int
),
`;

/**
 * Where AFTER_CURSOR's read after `$28` stopped, for the next turn's cursor (nextTurnCursor), as
 * turnReadTo decides it: where it met its bound `$21` before the last account, from the
 * accounts of the last endpoint it read and of the next (`edge`): the last account it read every
 * endpoint of, or the one it stopped in when no account before it was read (`read_stop`); no
 * further than the last account of its rows when they filled its `$2` × `$27`; and nothing when the
 * turn chose fewer than every account with something due it found past the cursor, or when as many
 * endpoints in flight as it reads (`in_flight_due`) may have hidden one.
 */
const READ_TO = `edge AS MATERIALIZED (
  SELECT x.account_id, row_number() OVER (ORDER BY x.account_id, x.id) AS k FROM (
    SELECT e.account_id, e.id FROM endpoints e WHERE e.account_id > $28::text
    ORDER BY e.account_id, e.id OFFSET $21::int - 1 LIMIT 2
  ) x
),
read_stop AS (
  SELECT CASE WHEN n.account_id <> l.account_id THEN l.account_id
              ELSE coalesce((SELECT max(e.account_id) FROM endpoints e
                             WHERE e.account_id > $28::text AND e.account_id < l.account_id), l.account_id)
         END AS account_id
  FROM edge l JOIN edge n ON l.k = 1 AND n.k = 2
),
read_to AS (
  -- read_stop (and edge) read in the last branches only, when they are needed.
  SELECT CASE
    -- With as many endpoints in flight as it reads, one past the cursor may have gone unread.
    WHEN (SELECT count(*) FROM in_flight_due) >= $21::int THEN NULL
    WHEN EXISTS (
      SELECT 1 FROM due_endpoints q
      WHERE q.live AND q.account_id > $28::text AND q.account_id NOT IN (SELECT account_id FROM turn_endpoints)
    ) THEN NULL
    -- Inside read_stop's row: least() passes over a NULL, and a read that stopped nowhere says nothing.
    WHEN (SELECT count(*) FROM after_cursor) >= $2::int * $27::int
      THEN (SELECT least(r.account_id, (SELECT max(a.account_id) FROM after_cursor a WHERE a.account_id > $28::text))
            FROM read_stop r)
    ELSE (SELECT account_id FROM read_stop)
  END AS account_id
)`;

/**
 * The read past a held-up walk: each endpoint's own due deliveries (endpoint-due.ts); with `turn`,
 * of those and AFTER_CURSOR's, those a claim with the accounts in turn reads (TURN_ENDPOINTS), which
 * walks nothing and reads them whatever `held_up` would say.
 */
const heldUpRead = (turn: boolean) => `
idle_due AS (
  SELECT e.id, e.enabled AND NOT e.paused AS live, e.account_id, q.next_due_at
  FROM endpoint_due q
  -- By key, for each entry: joined, the generic plan read every endpoint to hash them. The LIMIT
  -- keeps it a lookup (id is the key).
  CROSS JOIN LATERAL (
    SELECT e.id, e.account_id, e.enabled, e.paused FROM endpoints e WHERE e.id = q.endpoint_id LIMIT 1
  ) e
  WHERE q.next_due_at BETWEEN 0 AND $1::bigint
    AND e.id NOT IN (SELECT endpoint_id FROM full_endpoints)
    AND e.account_id NOT IN (SELECT account_id FROM full_accounts)
    AND q.endpoint_id NOT IN (SELECT endpoint_id FROM live)
${turn ? '' : '    AND EXISTS (SELECT 1 FROM held_up)\n'}  ORDER BY q.next_due_at
  LIMIT $21::int
),
in_flight_due AS (
  SELECT e.id, e.enabled AND NOT e.paused AS live, e.account_id, q.next_due_at
  FROM (
    SELECT DISTINCT endpoint_id FROM live WHERE endpoint_id NOT IN (SELECT endpoint_id FROM full_endpoints)
  ) f
  ${dueEntryAndEndpoint('f.endpoint_id')}
  WHERE e.account_id NOT IN (SELECT account_id FROM full_accounts)
${turn ? '' : '    AND EXISTS (SELECT 1 FROM held_up)\n'}    -- Only those with a due delivery no one holds: one seek per claimable status, stepping past the
    -- endpoint's own leased ones.
    AND EXISTS (
      SELECT 1 FROM unnest($20::text[]) AS s (status)
      CROSS JOIN LATERAL (
        SELECT 1 FROM deliveries d
        WHERE d.endpoint_id = f.endpoint_id
          AND d.status IN ${QUEUED_SQL}
          AND d.status = s.status
          AND d.next_attempt_at <= $1::bigint
          AND d.id NOT IN (SELECT delivery_id FROM live)
        LIMIT 1
      ) d
    )
  ORDER BY q.next_due_at
  LIMIT $21::int
),
${turn ? AFTER_CURSOR : ''}due_endpoints AS MATERIALIZED (
  SELECT * FROM idle_due
  UNION ALL
  SELECT * FROM in_flight_due${turn ? '\n  UNION ALL\n  SELECT * FROM after_cursor WHERE id NOT IN (SELECT id FROM idle_due)' : ''}
),${turn ? TURN_ENDPOINTS : ''}
heads AS (
  SELECT h.id, h.endpoint_id, h.account_id, h.next_attempt_at
  FROM ${turn ? 'turn_endpoints' : 'due_endpoints'} q
  CROSS JOIN unnest($20::text[]) AS s (status)
  CROSS JOIN LATERAL (
    SELECT d.id, d.endpoint_id, d.account_id, d.next_attempt_at
    FROM deliveries d
    WHERE d.endpoint_id = q.id
      AND d.status IN ${QUEUED_SQL}
      AND d.status = s.status
      AND d.next_attempt_at <= $1::bigint
      AND d.id NOT IN (SELECT delivery_id FROM live)
    ORDER BY d.next_attempt_at
    LIMIT $26::int
  ) h
  WHERE q.live
),
stale AS (
  SELECT q.id FROM due_endpoints q
  WHERE NOT q.live
     OR (${turn ? 'q.id IN (SELECT id FROM turn_endpoints) AND ' : ''}q.id NOT IN (SELECT endpoint_id FROM heads)
         AND q.id NOT IN (SELECT endpoint_id FROM live))
)
`;
const HELD_UP_READ = heldUpRead(false);
/**
 * The leases of `picked` (its rows' columns and a `token` each), `$1` now and `$4` the lease's
 * length, and the rows an attempt needs of those leased (`claimed`).
 */
export const LEASE_PICKED = `
leased AS (
  INSERT INTO leases (delivery_id, endpoint_id, token, expires_at)
  SELECT id, endpoint_id, token, $1::bigint + $4::bigint FROM picked
  ON CONFLICT (delivery_id) DO UPDATE SET token = excluded.token, expires_at = excluded.expires_at
  WHERE leases.expires_at <= $1::bigint
  RETURNING delivery_id
),
claimed AS (
  SELECT ${CLAIMED_COLUMNS}, d.token AS lease_token, $1::bigint + $4::bigint AS lease_expires_at,
         ${attemptColumnsSql('$1::bigint')},
         -- Each event's body on one of its rows only (design D72): the driver parses it on the event loop.
         -- A large one is read apart, as bytes (claimedOf).
         CASE WHEN row_number() OVER (PARTITION BY d.event_id) = 1 AND octet_length(ev.body) <= ${LARGE_BODY_BYTES}
              THEN ev.body END AS body
  FROM picked d
  JOIN events ev ON ev.id = d.event_id
  JOIN endpoints e ON e.id = d.endpoint_id
  -- The leased ids as an array read once: joined, the generic plan read every lease again for each
  -- picked row.
  WHERE d.id = ANY (ARRAY(SELECT delivery_id FROM leased))
)
`;

/**
 * From the due rows to the leases: per-endpoint caps, locks, shares, the leases, the answer's rows;
 * `order` (of `ranked`'s columns, qualified by the alias it is given) the order in which the locked
 * rows are ranked in their origin and taken up to the limit. An account's rank is always in due
 * order.
 */
const leaseDue = (order: (alias: string) => string) => `
candidates AS (
  SELECT due.id, due.endpoint_id, due.account_id, e.origin, due.next_attempt_at,
         row_number() OVER (PARTITION BY due.endpoint_id ORDER BY due.next_attempt_at, due.id) AS rn
  FROM due
  -- Each row's endpoint by key, as in heads: joined, the generic plan hashed every endpoint on each
  -- claim until the table was large enough to tip it (a claim 1.9 ms with 8 endpoints, 3.3 ms with
  -- 10,000; now 2.0 and 2.1 ms). The LIMIT keeps it a lookup (id is the key).
  CROSS JOIN LATERAL (
    SELECT e.origin FROM endpoints e WHERE e.id = due.endpoint_id AND e.enabled LIMIT 1
  ) e
),
within_endpoint AS (
  SELECT c.* FROM candidates c
  LEFT JOIN inflight i ON i.endpoint_id = c.endpoint_id
  LEFT JOIN endpoint_caps ec ON ec.endpoint_id = c.endpoint_id
  WHERE c.rn + coalesce(i.n, 0) <= coalesce(ec.cap, $3::int)
),
locked AS MATERIALIZED (
  SELECT ${CLAIMED_COLUMNS}
  FROM deliveries d
  WHERE d.id = ANY (ARRAY(SELECT id FROM within_endpoint))
    AND d.status = ANY ($20::text[])
    AND d.next_attempt_at <= $1::bigint
  ORDER BY d.next_attempt_at, d.id
  LIMIT $5::int
  FOR NO KEY UPDATE OF d SKIP LOCKED
),
at_origin AS (
  SELECT l.*, w.origin,
         row_number() OVER (PARTITION BY w.origin, l.account_id ORDER BY l.next_attempt_at, l.id) AS rn_at_origin
  FROM locked l
  -- The origin by key, as in candidates: joined to within_endpoint, the generic plan compared each
  -- locked row with every candidate, work growing with the square of the window.
  CROSS JOIN LATERAL (SELECT e.origin FROM endpoints e WHERE e.id = l.endpoint_id LIMIT 1) w
),
-- Each account's share of an origin first: its rows past it then take no place in the account's
-- or the origin's rank (each such group is inside one account and one origin), so another
-- account's rows there are not passed over behind them.
by_account AS (
  SELECT a.*, row_number() OVER (PARTITION BY a.account_id ORDER BY a.next_attempt_at, a.id) AS rn_account
  FROM at_origin a
  LEFT JOIN held_at_origins h ON h.account_id = a.account_id AND h.origin = a.origin
  LEFT JOIN pair_caps pc ON pc.account_id = a.account_id AND pc.origin = a.origin
  WHERE a.rn_at_origin + coalesce(h.n, 0) <= coalesce(pc.cap, $25::int)
),
ranked AS (
  SELECT a.*, row_number() OVER (PARTITION BY a.origin ORDER BY ${order('a')}) AS rn_origin FROM by_account a
),
picked AS MATERIALIZED (
  SELECT r.*, gen_random_uuid()::text AS token FROM ranked r
  LEFT JOIN held_accounts ha ON ha.account_id = r.account_id
  LEFT JOIN held_origins ho ON ho.origin = r.origin
  LEFT JOIN origin_caps oc ON oc.origin = r.origin
  WHERE r.rn_account + coalesce(ha.n, 0) <= $12::int
    AND r.rn_origin + coalesce(ho.n, 0) <= coalesce(oc.cap, $13::int)
  ORDER BY ${order('r')}
  LIMIT $2::int
),
${LEASE_PICKED}
`;
const LEASE_DUE = leaseDue((t) => `${t}.next_attempt_at, ${t}.id`);

/**
 * Leases up to `$2` due deliveries with a fresh token each, expiring at `$1 + $4`.
 * `$1` now, `$2` limit, `$3` per-endpoint cap, `$4` lease ms, `$5` window, `$6`/`$7` the delivery ids
 * and tokens of the caller's leases being recorded (not in flight: see ClaimRequest.finishing);
 * `$8` to `$19` the shares and the caps in their place (below), `$20` the claimable statuses, `$21` the
 * walk's bound before its steps for the deliveries in flight (claimWalk; `walk_steps`), `$22` to
 * `$25` each account's requests open at each origin and its share there (accountsAtOrigins), `$26`
 * how many of an endpoint's own due deliveries a held-up read takes (headsPerEndpoint).
 *
 * A lease is a row of `leases` (migration 3), and only that: claiming inserts it, and writes
 * nothing into the delivery (migration 15 dropped the delivery's copy of the expiry, whose write
 * was a new version of the row, often in every index, for each delivery handed out). A lease that
 * expired is as good as none (design I3).
 *
 * It picks as the SQLite store's pickDue does (design I6, D25): due, unleased deliveries of
 * enabled endpoints, at most `cap - in flight` per endpoint in due order (`within_endpoint`), then,
 * among the rows it could lock (`locked`), at most the claimer's share less what it holds per
 * account (`$12`, held `$8`/`$9`), per origin (`$13`, held `$10`/`$11`) and per account at an
 * origin (`$25`, held `$22` to `$24`), so an endpoint, account or origin at its limit is skipped,
 * never waited on. The shares rank locked rows, not
 * candidates: rows another claimer holds are passed over for the next ones of the same account.
 * That costs a lock (a WAL record) for each row of the window it does not lease; ranking the
 * candidates instead locked only the batch and made a claim 0.9× as long, but then the rows
 * another claimer holds count against their account, and a second worker on one busy account
 * could come back empty. The account's share of an origin is taken first (`at_origin`), then the
 * account's and the origin's ranks separately, so a claim may take fewer than it could (never
 * more); the next claim takes the rest. The caps in their place (ClaimShares' `capped`: the
 * circuit breaker's, design D27, and the worker's division of an origin's share, D25) replace the
 * endpoint's (`$14`/`$15`), the origin's (`$16`/`$17`, `origin_caps`) and the account's at an
 * origin (`$18`/`$19`, `pair_caps`); an endpoint, an origin or an account at an origin already at
 * its cap, or an account at its share of an origin, is left out of `due` too, or its
 * backlog (piled up while its breaker was open, or behind its hanging requests) would fill the
 * window and leave the claim nothing for anyone else.
 *
 * "Unleased" is `NOT IN` the live leases: a hashed set built once per claim (`leases` holds only
 * what is in flight), which each row of the due-time walk probes, so the walk stays an index walk
 * in due order. `locked` then locks the candidates in due order with `FOR NO KEY UPDATE SKIP
 * LOCKED` and the LIMIT applied after the skip (rows it locks but does not lease are free again
 * when the statement ends): rows another claimer is leasing are passed over for the next ones, so
 * concurrent claimers share the work instead of all fighting for the same first rows. Its WHERE
 * is re-checked on the newest version of a row that changed since this statement's snapshot (a
 * delivery finished or rescheduled meanwhile is passed over), and what it returns is that newest
 * version: the record of an expired lease's late attempt, committed since the snapshot, is in it
 * (its attempt count with it, so the next attempt never reuses a number). A lease another claimer
 * committed after this statement's snapshot is not in its set: the insert meets it, reads it as
 * committed (ON CONFLICT), and takes it over only if it has expired; otherwise that delivery is
 * left out of this claim's answer, which then holds fewer than it could, and the next claim takes
 * the rest. That insert locks each lease it meets, even one it leaves be. The statements that
 * write a lease and wait on anything else (a renewal, a record, a deletion) lock its delivery
 * first, so none can hold a lease this claim waits for while waiting for a delivery this claim
 * holds; a release, and the prune's removal of leases whose delivery is gone, wait on nothing else.
 *
 * MATERIALIZED: the locking query runs exactly once. `locked` looks its rows up by primary key
 * from the array of `within_endpoint` ids: the store runs this statement with a generic plan, and
 * joining the candidates to `deliveries` let that plan hash-join it against every due row,
 * so each claim read the whole backlog (5× the time with 16,000 due). For the same reason its
 * statuses are a parameter (`$20`, the claimable ones), not the SQL list: no partial index can then
 * be proven to hold its rows, so the primary key is the only way in. With the list, statistics
 * taken while the queue was empty made the plan walk `deliveries_due` and filter every due row by
 * id (2 ms a claim, growing with the backlog).
 *
 * `due` bounds the work by what is due and in flight, not by the table. `walked` walks the
 * due-time index past what may not be taken (`full_endpoints`, `full_accounts`) and stops after
 * `$5` rows, so the per-endpoint ranking sorts a few hundred rows rather than the whole backlog
 * (see claimWindow). Its due time is a range (`BETWEEN 0 AND $1`: every due time is at or after
 * 0): in the generic plan PostgreSQL guesses a third of the rows for one bound whose value it does
 * not know, and 0.5% for a range. With no statistics yet to say how few rows are claimable (a new
 * database until autovacuum first analyzes it), one bound made it read every due row to sort them
 * instead of walking the index. Each row passed over is a step of the walk, so it takes at most
 * `$21` steps (claimWalk) and one more for each delivery in flight (`walk_steps`, walkSteps): a
 * tenant's backlog waiting behind its own limits made every claim read all of it (another
 * tenant's next delivery waited 241 ms behind 200,000 of them). Cut short with
 * fewer than `$5` (`held_up`, decided once per statement), `due_endpoints` reads the endpoints
 * with something due by their next due time (endpoint-due.ts), in due order, a bounded number of
 * them, those that may take no more left out before the limit: endpoints whose queued deliveries
 * are not due yet cost nothing, however many (seeking into each endpoint with queued deliveries
 * took 157 ms a claim at 20,000 endpoints holding a retry each). Endpoints with a request in flight keep their
 * entries (a lease that runs out makes its delivery claimable with no write), so they are read
 * apart (`in_flight_due`; `idle_due` the others, at most `$21` each): from those `live` holds, the
 * ones with a due delivery no one holds. In one due order with the others, more of them than `$21`
 * (a tenant's hanging endpoints, held by other workers) filled the read, and every other tenant's
 * delivery waited until their requests ended. `heads`
 * then reads the first `$26` due, unleased deliveries of each claimable status (`$20`) of each one
 * enabled and unpaused, a seek each into the index of each endpoint's queued deliveries by status
 * and due time (migration 17). The status sought is that parameter's, beside the queued statuses'
 * list, so that only that index can be proven to hold the rows, not the due-time index (every
 * endpoint's rows): the generic plan walked the latter for each endpoint instead, filtering by
 * endpoint. The entries it read with nothing to take and nothing in flight (`stale`) come back
 * with the answer, for claimDue to settle. `leases` holds only work in flight, so counting it
 * costs nothing however large the log grows.
 *
 * One row with the stale entries and no delivery when nothing was claimed (`held_up` says whether
 * the walk was held up). The cap is read from this statement's snapshot: claimers racing on one
 * endpoint can together exceed it briefly (bounded by claimers × cap); the lease and the token
 * stay exact.
 */
export const CLAIM_DUE = `
WITH ${WALK},
${HELD_UP},
${HELD_UP_READ},
due AS (
  SELECT * FROM walked
  UNION
  SELECT * FROM heads
  ORDER BY next_attempt_at, id
  LIMIT $5::int
),
${LEASE_DUE}
SELECT c.*, s.stale_endpoints, s.held_up
FROM (SELECT ARRAY(SELECT id FROM stale) AS stale_endpoints, EXISTS (SELECT 1 FROM held_up) AS held_up) s
LEFT JOIN claimed c ON true
ORDER BY c.next_attempt_at, c.id`;

/**
 * CLAIM_WALK: the walk alone, `$1` to `$25` as CLAIM_DUE's. A walk held up leases nothing here and
 * answers `held_up` (one row, no delivery): the caller runs CLAIM_DUE instead. Otherwise it leases
 * what CLAIM_DUE would, whose read past the walk then finds nothing to add. The read's parts are
 * planned into CLAIM_DUE and started at every run, taken or not: the walk alone first took the
 * store's database CPU per delivery to 0.92–0.96× (bench/store-cycle.mjs).
 */
export const CLAIM_WALK = `
WITH ${WALK},
${HELD_UP},
due AS (
  SELECT * FROM walked WHERE NOT EXISTS (SELECT 1 FROM held_up)
  ORDER BY next_attempt_at, id
  LIMIT $5::int
),
${LEASE_DUE}
SELECT c.*, s.held_up
FROM (SELECT EXISTS (SELECT 1 FROM held_up) AS held_up) s
LEFT JOIN claimed c ON true
ORDER BY c.next_attempt_at, c.id`;

/**
 * The order of a turn's deliveries: each account's first, then each one's second, and so on; in a
 * round, in the turn order after the cursor `$28` (as TURN_ENDPOINTS), so that a share that cuts
 * the turn short leaves out the accounts the next turn starts with (turnCursor).
 */
const TURN_ORDER = (t: string) => `${t}.rn_account,
  ${t}.account_id <= $28::text, ${t}.account_id, ${t}.next_attempt_at, ${t}.id`;

/**
 * CLAIM_DUE with the accounts in turn (design D77), `$1` to `$26` as its, `$27` and `$28` (turnParams): no
 * walk; the endpoints' own first due deliveries, read as a held-up claim reads them but of a few
 * endpoints per account only (TURN_ENDPOINTS), taken each account's first (in the turn order after
 * the cursor, TURN_ORDER), then each one's second, and so on, within the same caps
 * and shares. The worker runs it
 * when a turn is due (at most every ACCOUNTS_TURN_MS): a backlog of one account's, all due before
 * another's delivery, held that one for as long as the backlog took to go out. Answers the stale
 * entries as CLAIM_DUE does.
 */
export const CLAIM_IN_TURN = `
WITH ${LIMITS},
${heldUpRead(true)},
due AS (
  SELECT h.* FROM heads h
  ORDER BY row_number() OVER (PARTITION BY h.account_id ORDER BY h.next_attempt_at, h.id), h.next_attempt_at, h.id
  LIMIT $5::int
),
${leaseDue(TURN_ORDER)},
${READ_TO}
SELECT c.*, s.stale_endpoints, s.read_to
FROM (SELECT ARRAY(SELECT id FROM stale) AS stale_endpoints, (SELECT account_id FROM read_to) AS read_to) s
LEFT JOIN claimed c ON true
ORDER BY c.next_attempt_at, c.id`;

/** CLAIM_WALK's parameters: CLAIM_DUE's first 25 (it takes no heads, `$26`). */
export const WALK_PARAMS = 25;

const NO_LIMIT = 2_147_483_647;

/** `$22` to `$25`: the accounts and origins of `shares.openByAccountAtOrigin`, their counts, the cap. */
function accountsAtOrigins(shares: ClaimShares | undefined): unknown[] {
  const pairs = [...(shares?.openByAccountAtOrigin.keys() ?? [])].map(splitAccountAtOrigin);
  return [
    pairs.map(([account]) => account),
    pairs.map(([, origin]) => origin),
    [...(shares?.openByAccountAtOrigin.values() ?? [])],
    shares?.perAccountAtOrigin ?? NO_LIMIT,
  ];
}

/** CLAIM_DUE's parameters for `request`, in their order ($1 to $26; CLAIM_WALK takes all but the last). */
export function claimParams({
  now,
  limit,
  leaseMs,
  perEndpointCap,
  finishing = [],
  shares,
}: ClaimRequest): unknown[] {
  const window = claimWindow(limit);
  return [
    now,
    limit,
    perEndpointCap,
    leaseMs,
    window,
    finishing.map((f) => f.deliveryId),
    finishing.map((f) => f.leaseToken),
    [...(shares?.openByAccount.keys() ?? [])],
    [...(shares?.openByAccount.values() ?? [])],
    [...(shares?.openByOrigin.keys() ?? [])],
    [...(shares?.openByOrigin.values() ?? [])],
    // Without shares, no limit: a cap of `limit` would rank away the rows past the first `limit`,
    // which concurrent claimers skip to when the first ones are locked.
    shares?.perAccount ?? NO_LIMIT,
    shares?.perOrigin ?? NO_LIMIT,
    [...(shares?.capped?.endpoints.keys() ?? [])],
    [...(shares?.capped?.endpoints.values() ?? [])],
    [...(shares?.capped?.origins?.keys() ?? [])],
    [...(shares?.capped?.origins?.values() ?? [])],
    [...(shares?.capped?.accountsAtOrigins.keys() ?? [])],
    [...(shares?.capped?.accountsAtOrigins.values() ?? [])],
    CLAIMABLE_STATUSES,
    claimWalk(window),
    ...accountsAtOrigins(shares),
    headsPerEndpoint(limit, perEndpointCap),
  ];
}

/**
 * CLAIM_IN_TURN's parameters for `request`: CLAIM_DUE's, how many endpoints of an account it reads,
 * and the turn's cursor.
 */
export const turnParams = (request: TurnRequest): unknown[] => [
  ...claimParams(request),
  turnEndpointsPerAccount(request.limit, request.perEndpointCap),
  request.after,
];

/** U+FFFD in UTF-8: what the driver makes of each sequence of bytes that is not UTF-8 (Pg.preparedBinary). */
const REPLACEMENT = Buffer.from('\uFFFD');

/** The bodies of events `$1`. */
const LARGE_BODIES = `SELECT id AS event_id, body FROM events WHERE id = ANY ($1::text[])`;

/**
 * The deliveries a claim's rows lease (a row with no delivery carries only what the claim read),
 * CLAIM_DUE's, CLAIM_WALK's or another statement's of LEASE_PICKED (claim-probes.ts).
 * Bodies over LARGE_BODY_BYTES are not among the rows: read as text, each is hex that this thread
 * decodes in one piece (2.9 ms for 240 KiB on a bench machine), so they are read after, as bytes.
 * A delivery whose event was deleted in between (its account's deletion) is left out: its lease
 * was deleted with it (delete-deliveries.ts). Should the read fail, the claim's leases are given
 * back before the error goes on.
 */
export async function claimedOf(pg: Pg, rows: Row[]): Promise<ClaimedDelivery[]> {
  const leased = rows.filter((row) => row.id !== null);
  const bodies = bodiesOf(leased);
  const apart = [...new Set(leased.map((row) => row.event_id as string).filter((id) => !bodies.has(id)))];
  if (apart.length === 0) return toClaimed(leased, leaseOfRow, bodies);
  try {
    for (const [id, body] of await readBodies(pg, apart)) bodies.set(id, body);
  } catch (error) {
    // The claim's leases are committed: given back, its deliveries wait for no lease to run out.
    await releaseLeases(
      pg,
      leased.map((row) => ({ deliveryId: row.id as string, leaseToken: row.lease_token as string })),
    ).catch(() => undefined);
    throw error;
  }
  return toClaimed(
    leased.filter((row) => bodies.has(row.event_id as string)),
    leaseOfRow,
    bodies,
  );
}

/** The bodies of `events` that are still there, as bytes (claimedOf). */
async function readBodies(pg: Pg, events: string[]): Promise<Map<string, Uint8Array>> {
  const bodies = new Map<string, Uint8Array>();
  const unsure: string[] = [];
  for (const row of await pg.preparedBinary('large_bodies', LARGE_BODIES, [events])) {
    const body = row.body as Buffer;
    // A body holding U+FFFD, its own or in place of bytes that were not UTF-8, is read again as hex.
    if (body.includes(REPLACEMENT)) unsure.push(row.event_id as string);
    else bodies.set(row.event_id as string, ownBytes(body));
  }
  if (unsure.length > 0)
    for (const [id, body] of bodiesOf(await pg.prepared('large_bodies_hex', LARGE_BODIES, [unsure])))
      bodies.set(id, body);
  return bodies;
}

/**
 * Rounds of settling and claiming again, in one call, when a claim takes nothing but stale entries:
 * with the smallest window, 16,384 entries at most (20,000 left by a calm period took one call of
 * 367 ms to settle).
 */
const SETTLE_ROUNDS = 32;

/**
 * A claim held up by a backlog reads up to `$21` entries of endpoint-due.ts; those with nothing to
 * take behind them (attempted since, or their endpoint disabled or paused) come back with its rows
 * and are settled, so the next claim reads past them: in the background when it took deliveries
 * (they go out at once), or before it claims again at once when that was all it found, SETTLE_ROUNDS
 * at most, while it can lock any of them: the worker would otherwise sleep until its poll with
 * another tenant's delivery due behind them.
 *
 * The store's claims run CLAIM_WALK first, and CLAIM_DUE when the walk was held up. A claim held
 * up is likely followed by another (the backlog that held it up is still there), so after one the
 * next runs CLAIM_DUE alone, which walks once, until its `held_up` says the walk is clear again.
 */
export function createClaimer(pg: Pg, settler: DueSettler) {
  let heldUp = false;
  // Nothing to take (nothingToClaim): no statement.
  const claimTurn = async (request: TurnRequest): Promise<ClaimedTurn> => {
    if (nothingToClaim(request)) return { claimed: [], next: request.after };
    // Whether the walk is held up is not known from it: the next claim runs as it would have.
    const rows = await pg.prepared('claim_in_turn', CLAIM_IN_TURN, turnParams(request));
    const stale = (rows[0]?.stale_endpoints ?? []) as string[];
    if (stale.length > 0) settler.later(stale, request.now);
    const claimed = await claimedOf(pg, rows);
    const readTo = (rows[0]?.read_to as string | null | undefined) ?? undefined;
    return { claimed, next: nextTurnCursor(request, claimed, readTo) };
  };
  const claimDue = async (request: ClaimRequest): Promise<ClaimedDelivery[]> => {
    if (nothingToClaim(request)) return [];
    const params = claimParams(request);
    if (!heldUp) {
      const walk = await pg.prepared('claim_walk', CLAIM_WALK, params.slice(0, WALK_PARAMS));
      heldUp = walk[0]?.held_up === true;
      if (!heldUp) return claimedOf(pg, walk);
    }
    for (let round = 1; ; round++) {
      const rows = await pg.prepared('claim_due', CLAIM_DUE, params);
      heldUp = rows[0]?.held_up === true;
      const claimed = await claimedOf(pg, rows);
      const stale = (rows[0]?.stale_endpoints ?? []) as string[];
      if (stale.length === 0) return claimed;
      if (claimed.length > 0) {
        settler.later(stale, request.now);
        return claimed;
      }
      if ((await settler.now(stale, request.now)) === 0 || round === SETTLE_ROUNDS) return claimed;
    }
  };
  return { claimDue, claimTurn };
}
