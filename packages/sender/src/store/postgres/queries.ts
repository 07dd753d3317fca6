/**
 * The PostgreSQL store's queries, one named query per operation (CONVENTIONS 4). Bind parameters
 * only; the one identifier ever put into SQL text is the schema name, validated and quoted by
 * `quoteSchema`. Tables are unqualified: every connection runs with `search_path` = the schema.
 */

const SCHEMA_NAME = /^[a-z_][a-z0-9_]*$/;

/** The schema as a quoted identifier; throws unless it is a plain lowercase name (≤ 63 bytes). */
export function quoteSchema(schema: string): string {
  if (!SCHEMA_NAME.test(schema) || schema.length > 63) {
    throw new TypeError(`invalid PostgreSQL schema name ${JSON.stringify(schema)}: use [a-z_][a-z0-9_]*`);
  }
  return `"${schema}"`;
}

// ---- migrations -------------------------------------------------------------------------------

/** Serialises concurrent `migrate()` calls, across processes, until the transaction ends. */
export const LOCK_MIGRATIONS = `SELECT pg_advisory_xact_lock($1::bigint)`;
export const SCHEMA_EXISTS = `SELECT 1 FROM pg_namespace WHERE nspname = $1`;
export const CREATE_SCHEMA = (quoted: string) => `CREATE SCHEMA IF NOT EXISTS ${quoted}`;
/** `SET LOCAL search_path`, bound: `$1` is the quoted schema. */
export const USE_SCHEMA = `SELECT set_config('search_path', $1, true)`;
export const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at BIGINT NOT NULL
)`;
export const SELECT_APPLIED_MIGRATIONS = `SELECT version FROM schema_migrations`;
export const RECORD_MIGRATION = `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`;

// ---- endpoints --------------------------------------------------------------------------------

export const INSERT_ENDPOINT = `
INSERT INTO endpoints (id, account_id, url, events, secret, description, created_at, updated_at)
VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $7)
RETURNING *`;
export const SELECT_ENDPOINT = `SELECT * FROM endpoints WHERE id = $1 AND account_id = $2`;
export const INSERT_ACCOUNT = `
INSERT INTO accounts (id, name, plan, api_key_hash, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING *`;
export const SELECT_ACCOUNT = `SELECT * FROM accounts WHERE id = $1`;
export const SELECT_ACCOUNT_BY_KEY_HASH = `SELECT * FROM accounts WHERE api_key_hash = $1`;

export const SELECT_ENDPOINTS_OF_ACCOUNT = `SELECT * FROM endpoints WHERE account_id = $1 ORDER BY id`;
/** One statement, so a concurrent patch of another field is never lost. `$6`: set the description. */
export const UPDATE_ENDPOINT = `
UPDATE endpoints SET
  url = coalesce($3::text, url),
  events = coalesce($4::jsonb, events),
  secret = coalesce($5::text, secret),
  description = CASE WHEN $6::boolean THEN $7::text ELSE description END,
  updated_at = $8
WHERE id = $1 AND account_id = $2
RETURNING *`;
/**
 * Deliveries and their attempts go by cascade; leases (no foreign key, see migration 3) with them.
 * The deliveries are locked before their leases are deleted — the order claims, records and
 * releases take them in — so a release of one of them waits instead of deadlocking.
 */
export const DELETE_ENDPOINT = `
WITH gone AS (DELETE FROM endpoints WHERE id = $1 AND account_id = $2 RETURNING id),
targets AS MATERIALIZED (
  SELECT id FROM deliveries WHERE endpoint_id IN (SELECT id FROM gone) ORDER BY id FOR UPDATE
),
leases_gone AS (DELETE FROM leases WHERE delivery_id IN (SELECT id FROM targets))
SELECT count(*)::int AS n FROM gone`;

// ---- publish (one transaction: invariant 2) -----------------------------------------------------

export const INSERT_EVENT = `INSERT INTO events (id, account_id, name, body, created_at) VALUES ($1, $2, $3, $4, $5)`;
/**
 * The account's endpoints subscribed to the event, share-locked so an endpoint cannot be disabled
 * between this read and the commit: its new delivery is `skipped` or is held with the others.
 */
export const LOCK_SUBSCRIBED_ENDPOINTS = `
SELECT id, enabled FROM endpoints WHERE account_id = $1 AND events ? $2 ORDER BY id FOR SHARE`;
/** All the event's deliveries in one statement: `$6..$9` are parallel arrays, one row each. */
export const INSERT_DELIVERIES = `
INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, next_attempt_at, created_at, updated_at)
SELECT d.id, $1, d.endpoint_id, $2, $3, d.status, d.next_attempt_at, $4, $4
FROM unnest($5::text[], $6::text[], $7::text[], $8::bigint[]) AS d (id, endpoint_id, status, next_attempt_at)`;
/** Wakes every listening worker when the transaction commits (the payload is the schema). */
export const NOTIFY_DUE = `SELECT pg_notify('linkhooks_due', $1)`;
export const DUE_CHANNEL = 'linkhooks_due';
export const LISTEN_DUE = `LISTEN linkhooks_due`;

// ---- claims (invariants 3, 6) ---------------------------------------------------------------------

/**
 * Leases up to `$2` due deliveries with a fresh token each, expiring at `$1 + $4`.
 * `$1` now, `$2` limit, `$3` per-endpoint cap, `$4` lease ms, `$5` window, `$6`/`$7` the delivery ids
 * and tokens of the caller's leases being recorded (not in flight: see ClaimRequest.finishing).
 *
 * A lease is a row of `leases` (migration 3): claiming inserts it, and copies its expiry into the
 * delivery's unindexed `lease_expires_at` (a heap-only update). A lease that expired is as good as
 * none (invariant 3).
 *
 * `eligible` picks as the other stores' pickDue does (DESIGN invariant 6): due, unleased deliveries of
 * enabled endpoints, at most `cap - in flight` per endpoint in due order, so an endpoint at its
 * cap is skipped, never waited on. `picked` then locks them in due order with
 * `FOR NO KEY UPDATE SKIP LOCKED` and the LIMIT applied after the skip: rows another claimer
 * holds are passed over for the next ones, so concurrent claimers share the work instead of all
 * fighting for the same first rows. Its WHERE is re-checked on the newest version of a row that
 * changed since this statement's snapshot — which is why a claim writes the expiry into the row:
 * a delivery another claimer leased (or finished) meanwhile is passed over for the next one, not
 * handed out twice nor lost to this claim. Should two claims still meet on one delivery, the
 * insert meets the other's lease, which ON CONFLICT reads as committed, and takes it over only if
 * it has expired. MATERIALIZED: the locking query runs exactly once. `picked` looks its rows up
 * by primary key from the array of `eligible` ids: the store runs this statement with a generic
 * plan, and joining `eligible` to `deliveries` let that plan hash-join it against every due row,
 * so each claim read the whole backlog (5× the time with 16,000 due).
 *
 * The claimed rows are what `fenced` returns, not a read of `deliveries`: a plain read sees this
 * statement's snapshot, and the record of an expired lease's late attempt, committed since, would
 * be missing from it (its attempt count with it, so the next attempt would reuse a number). The
 * UPDATE writes, and returns, the newest version of each row.
 *
 * `due` bounds the work by what is due and in flight, not by the table: it walks the due-time
 * index past endpoints at their cap and stops after `$5` rows, so the per-endpoint ranking sorts a
 * few hundred rows rather than the whole backlog (see claimWindow). `leases` holds only
 * work in flight, so counting it costs nothing however large the log grows.
 *
 * The cap is read from this statement's snapshot: claimers racing on one endpoint can together
 * exceed it briefly (bounded by claimers × cap); the lease and the token stay exact.
 */
export const CLAIM_DUE = `
WITH inflight AS (
  SELECT endpoint_id, count(*) AS n FROM leases
  WHERE expires_at > $1::bigint
    AND (delivery_id, token) NOT IN (SELECT * FROM unnest($6::text[], $7::text[]))
  GROUP BY endpoint_id
),
due AS (
  SELECT d.id, d.endpoint_id, d.next_attempt_at
  FROM deliveries d
  WHERE d.status IN ('pending', 'awaiting_retry')
    AND d.next_attempt_at <= $1::bigint
    AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= $1::bigint)
    AND d.endpoint_id NOT IN (SELECT endpoint_id FROM inflight WHERE n >= $3::int)
  ORDER BY d.next_attempt_at
  LIMIT $5::int
),
candidates AS (
  SELECT due.id, due.endpoint_id, due.next_attempt_at,
         row_number() OVER (PARTITION BY due.endpoint_id ORDER BY due.next_attempt_at, due.id) AS rn
  FROM due
  JOIN endpoints e ON e.id = due.endpoint_id AND e.enabled
),
eligible AS (
  SELECT c.id, c.next_attempt_at FROM candidates c
  LEFT JOIN inflight i ON i.endpoint_id = c.endpoint_id
  WHERE c.rn + coalesce(i.n, 0) <= $3::int
),
picked AS MATERIALIZED (
  SELECT d.id, d.endpoint_id FROM deliveries d
  WHERE d.id = ANY (ARRAY(SELECT id FROM eligible))
    AND d.status IN ('pending', 'awaiting_retry')
    AND d.next_attempt_at <= $1::bigint
    AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= $1::bigint)
  ORDER BY d.next_attempt_at, d.id
  LIMIT $2::int
  FOR NO KEY UPDATE OF d SKIP LOCKED
),
leased AS (
  INSERT INTO leases (delivery_id, endpoint_id, token, expires_at)
  SELECT id, endpoint_id, gen_random_uuid()::text, $1::bigint + $4::bigint FROM picked
  ON CONFLICT (delivery_id) DO UPDATE SET token = excluded.token, expires_at = excluded.expires_at
  WHERE leases.expires_at <= $1::bigint
  RETURNING delivery_id, token, expires_at
),
fenced AS (
  UPDATE deliveries d SET lease_expires_at = l.expires_at FROM leased l WHERE d.id = l.delivery_id
  RETURNING d.id, d.event_id, d.endpoint_id, d.account_id, d.event_name, d.status, d.attempts,
            d.next_attempt_at, d.last_failure_kind, d.last_status_code, d.created_at, d.updated_at,
            l.token AS lease_token, l.expires_at AS lease_expires_at
)
SELECT d.*, ev.body AS body, e.url AS url, e.secret AS secret
FROM fenced d
JOIN events ev ON ev.id = d.event_id
JOIN endpoints e ON e.id = d.endpoint_id
ORDER BY d.next_attempt_at, d.id`;

/**
 * Ends lease `$2` of delivery `$1` with no attempt recorded. The delivery row is locked before the
 * lease row, the order claims and records take them in, so a release racing a record or a claim
 * of the same delivery waits instead of deadlocking.
 */
export const RELEASE_LEASE = `
WITH target AS MATERIALIZED (SELECT id FROM deliveries WHERE id = $1 FOR NO KEY UPDATE),
released AS (
  DELETE FROM leases WHERE delivery_id IN (SELECT id FROM target) AND token = $2 RETURNING delivery_id
)
UPDATE deliveries SET lease_expires_at = NULL WHERE id IN (SELECT delivery_id FROM released)`;

/**
 * When the worker should look again: the earliest due time of an unleased delivery, or the
 * earliest lease expiry; two index walks rather than a scan of the backlog (see SQLite's NEXT_DUE).
 * `least` ignores a NULL side.
 */
export const NEXT_DUE = `
SELECT least(
  (SELECT d.next_attempt_at FROM deliveries d
   WHERE d.status IN ('pending', 'awaiting_retry') AND d.next_attempt_at IS NOT NULL
     AND d.lease_expires_at IS NULL
   ORDER BY d.next_attempt_at LIMIT 1),
  (SELECT min(l.expires_at) FROM leases l
   JOIN deliveries d ON d.id = l.delivery_id AND d.status IN ('pending', 'awaiting_retry'))
) AS at`;

// ---- recording an attempt (one transaction: invariants 3, 4, 5) ---------------------------------

/**
 * Locks the endpoint of the delivery `$1` while lease `$2` holds. Endpoint before delivery, the
 * order every transaction here takes them in, so concurrent attempts of one endpoint queue up
 * instead of losing failure-count increments or deadlocking over its held deliveries.
 */
export const LOCK_ENDPOINT_OF_LEASED = `
SELECT e.* FROM endpoints e
WHERE e.id = (SELECT l.endpoint_id FROM leases l WHERE l.delivery_id = $1 AND l.token = $2)
FOR UPDATE OF e`;
/**
 * Compare-and-set, part 1: the delivery, locked, while its lease is still `$2` (the lease row is
 * locked too: a claimer taking over an expired lease waits for this transaction, then sees it gone).
 */
export const LOCK_LEASED_DELIVERY = `
SELECT d.* FROM deliveries d JOIN leases l ON l.delivery_id = d.id
WHERE d.id = $1 AND l.token = $2
FOR UPDATE OF d, l`;
/** Zero rows inserted means this attempt number is already recorded (invariant 4). */
export const INSERT_ATTEMPT = `
INSERT INTO attempts (delivery_id, number, started_at, duration_ms, status_code, failure_kind, error_message,
                      response_snippet, next_attempt_at, request_headers)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
ON CONFLICT (delivery_id, number) DO NOTHING`;
/**
 * The record of a batch of attempts that cannot disable their endpoints — successes (which reset
 * the failure count) and failures that only schedule a retry under per-delivery counting — as one
 * statement: one round trip for every attempt that finished together, instead of six each.
 *
 * Endpoint rows are not read or locked: locking them made every batch wait for the one before,
 * since a batch touches most endpoints. Whether a retry is held is read from the delivery itself:
 * a disabling holds every pending delivery of its endpoint, in flight or not, in the transaction
 * that disables it, and a re-enabling resumes them in the one that re-enables it. `fin` updates
 * the rows `locked` holds, so it computes from their newest version — a disabling or re-enabling
 * that committed while this statement waited for a lock is seen, where the snapshot's
 * `endpoints.enabled` would be stale (a retry held on an enabled endpoint is never resumed).
 * The only endpoint write, the reset, locks a row only when its count is not already 0. Rarely, a
 * reset and a disabling of the same endpoint lock in opposite orders; PostgreSQL then aborts one
 * as a deadlock and the caller runs the batch again.
 *
 * Per attempt the lease is compared and set as in LOCK_LEASED_DELIVERY (invariant 3), and the
 * lease row is deleted. An attempt is matched to its lease by delivery id and token together: a
 * batch can hold two attempts of one delivery (the first sent under a lease that ran out, the
 * second under the lease that took over), and only the second may be recorded. A duplicate
 * attempt number inserts nothing and leaves the delivery as it was (invariant 4) — only its lease
 * goes, from both places (`unfenced`), and a lease still held cannot have its attempt number
 * recorded already; the reset commits with the attempt (invariant 5).
 * Returns one row per applied attempt, with its lease token; a lost lease returns none.
 */
export const RECORD_ATTEMPTS_FAST = `
WITH input AS (
  SELECT * FROM unnest(
    $1::text[], $2::text[], $3::int[], $4::bigint[], $5::int[], $6::int[], $7::text[], $8::text[],
    $9::text[], $10::bigint[], $11::text[], $12::text[], $13::int[], $14::boolean[]
  ) AS t(delivery_id, lease_token, number, started_at, duration_ms, status_code, failure_kind, error_message,
         response_snippet, next_attempt_at, request_headers, status, attempts, reset)
),
locked AS MATERIALIZED (
  SELECT d.id FROM deliveries d
  WHERE d.id IN (SELECT delivery_id FROM input)
  ORDER BY d.id
  FOR UPDATE OF d
),
leased AS (
  DELETE FROM leases l USING input i, locked
  WHERE l.delivery_id = i.delivery_id AND l.token = i.lease_token AND locked.id = l.delivery_id
  RETURNING l.delivery_id AS id, l.token
),
ins AS (
  INSERT INTO attempts (delivery_id, number, started_at, duration_ms, status_code, failure_kind, error_message,
                        response_snippet, next_attempt_at, request_headers)
  SELECT i.delivery_id, i.number, i.started_at, i.duration_ms, i.status_code, i.failure_kind, i.error_message,
         i.response_snippet, i.next_attempt_at, i.request_headers
  FROM input i JOIN leased l ON l.id = i.delivery_id AND l.token = i.lease_token
  ON CONFLICT (delivery_id, number) DO NOTHING
  RETURNING delivery_id
),
applied AS MATERIALIZED (
  SELECT i.* FROM input i
  WHERE (i.delivery_id, i.lease_token) IN (SELECT id, token FROM leased)
    AND i.delivery_id IN (SELECT delivery_id FROM ins)
),
fin AS (
  UPDATE deliveries d
  SET status = CASE WHEN a.status = 'awaiting_retry' AND d.status = 'held' THEN 'held' ELSE a.status END,
      attempts = a.attempts, next_attempt_at = a.next_attempt_at, lease_expires_at = NULL,
      last_failure_kind = a.failure_kind, last_status_code = a.status_code, updated_at = $15
  FROM applied a
  WHERE d.id = a.delivery_id
  RETURNING d.id, d.status, d.endpoint_id, a.lease_token AS token, a.reset
),
unfenced AS (
  UPDATE deliveries d SET lease_expires_at = NULL
  WHERE d.id IN (SELECT l.id FROM leased l WHERE l.id NOT IN (SELECT delivery_id FROM ins))
),
reset AS (
  UPDATE endpoints e SET consecutive_failures = 0
  WHERE e.id IN (SELECT f.endpoint_id FROM fin f WHERE f.reset) AND e.consecutive_failures <> 0
)
SELECT id, token, status FROM fin`;

export const SET_ENDPOINT_FAILURES = `UPDATE endpoints SET consecutive_failures = $2 WHERE id = $1`;
export const DISABLE_ENDPOINT = `
UPDATE endpoints SET enabled = false, disabled_reason = 'consecutive_failures', disabled_at = $2, updated_at = $2
WHERE id = $1
RETURNING *`;
export const HOLD_DELIVERIES = `
UPDATE deliveries SET status = 'held', updated_at = $3
WHERE endpoint_id = $1 AND status IN ('pending', 'awaiting_retry') AND id <> $2`;
export const FINISH_ATTEMPT = `
UPDATE deliveries SET status = $2, attempts = $3, next_attempt_at = $4, lease_expires_at = NULL,
  last_failure_kind = $5, last_status_code = $6, updated_at = $7
WHERE id = $1`;
export const DELETE_LEASE = `DELETE FROM leases WHERE delivery_id = $1`;
/** Outside any transaction (VACUUM cannot run in one); the store runs it in the background. */
export const VACUUM_LEASES = `VACUUM (SKIP_LOCKED) leases`;

// ---- re-enabling and manual retries -------------------------------------------------------------

export const REENABLE_ENDPOINT = `
UPDATE endpoints SET enabled = true, consecutive_failures = 0, disabled_reason = NULL, disabled_at = NULL,
  updated_at = $3
WHERE id = $1 AND account_id = $2
RETURNING *`;
export const RESUME_HELD = `
UPDATE deliveries SET status = CASE WHEN attempts = 0 THEN 'pending' ELSE 'awaiting_retry' END,
  next_attempt_at = $2, updated_at = $2
WHERE endpoint_id = $1 AND status = 'held'`;
export const REPLAY_SKIPPED = `
UPDATE deliveries SET status = CASE WHEN attempts = 0 THEN 'pending' ELSE 'awaiting_retry' END,
  next_attempt_at = $2, updated_at = $2
WHERE endpoint_id = $1 AND status = 'skipped'`;

export const SELECT_DELIVERY = `SELECT * FROM deliveries WHERE id = $1 AND account_id = $2`;
/** Share-locks the endpoint so it cannot be disabled while a retry of one of its deliveries is set. */
export const LOCK_ENDPOINT_SHARED = `SELECT enabled FROM endpoints WHERE id = $1 FOR SHARE`;
export const LOCK_DELIVERY = `SELECT * FROM deliveries WHERE id = $1 AND account_id = $2 FOR UPDATE`;
/** The delivery's lease, if any (expired or not): whether an attempt is in flight. */
export const SELECT_LEASE = `SELECT expires_at FROM leases WHERE delivery_id = $1`;
export const RETRY_NOW = `
UPDATE deliveries SET status = CASE WHEN attempts = 0 THEN 'pending' ELSE 'awaiting_retry' END,
  next_attempt_at = $2, updated_at = $2
WHERE id = $1
RETURNING *`;

// ---- the delivery log ---------------------------------------------------------------------------

export const LIST_DELIVERIES = `
SELECT * FROM deliveries
WHERE account_id = $1
  AND ($2::text IS NULL OR endpoint_id = $2::text)
  AND ($3::text IS NULL OR status = $3::text)
  AND ($4::text IS NULL OR event_name = $4::text)
  AND ($5::text IS NULL OR id < $5::text)
ORDER BY id DESC
LIMIT $6`;
export const SELECT_ATTEMPTS = `SELECT * FROM attempts WHERE delivery_id = $1 ORDER BY number`;
export const SELECT_EVENT = `SELECT * FROM events WHERE id = $1 AND account_id = $2`;

export const PRUNE_DELIVERIES = `
DELETE FROM deliveries WHERE status IN ('delivered', 'failed', 'skipped') AND updated_at < $1`;
/** Leases whose delivery is gone (none in normal operation; there is no foreign key to cascade). */
export const PRUNE_LEASES = `
DELETE FROM leases l WHERE NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.id = l.delivery_id)`;
export const PRUNE_EVENTS = `
DELETE FROM events ev
WHERE ev.created_at < $1 AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = ev.id)`;

export const COUNT_BY_STATUS = `SELECT status, count(*)::int AS n FROM deliveries GROUP BY status`;
export const COUNT_DISABLED = `SELECT count(*)::int AS n FROM endpoints WHERE NOT enabled`;

/** `publish` waits for the WAL flush even though the pool's sessions do not (see the store). */
export const DURABLE_COMMIT = `SET LOCAL synchronous_commit = on`;
