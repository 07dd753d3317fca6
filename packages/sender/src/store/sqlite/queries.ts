/** The SQLite store's queries, one named query per operation (CONVENTIONS 4). Bind parameters only. */

export const INSERT_ACCOUNT = `
INSERT INTO accounts (id, name, plan, api_key_hash, created_at) VALUES (@id, @name, @plan, @apiKeyHash, @now)`;
export const SELECT_ACCOUNT = `SELECT * FROM accounts WHERE id = ?`;
export const SELECT_ACCOUNT_BY_KEY_HASH = `SELECT * FROM accounts WHERE api_key_hash = ?`;

export const INSERT_ENDPOINT = `
INSERT INTO endpoints (id, account_id, url, events, secret, description, created_at, updated_at)
VALUES (@id, @accountId, @url, @events, @secret, @description, @now, @now)`;

export const SELECT_ENDPOINT = `SELECT * FROM endpoints WHERE id = ? AND account_id = ?`;
export const SELECT_ENDPOINTS_OF_ACCOUNT = `SELECT * FROM endpoints WHERE account_id = ? ORDER BY id`;
export const UPDATE_ENDPOINT = `
UPDATE endpoints SET url = @url, events = @events, secret = @secret, description = @description, updated_at = @now
WHERE id = @id AND account_id = @accountId`;
export const DELETE_ENDPOINT = `DELETE FROM endpoints WHERE id = ? AND account_id = ?`;

export const INSERT_EVENT = `INSERT INTO events (id, account_id, name, body, created_at) VALUES (?, ?, ?, ?, ?)`;
export const INSERT_DELIVERY = `
INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, next_attempt_at, created_at, updated_at)
VALUES (@id, @eventId, @endpointId, @accountId, @eventName, @status, @nextAttemptAt, @now, @now)`;

/**
 * Deliveries in flight per endpoint (DESIGN invariant 6), from the leased rows only (the partial
 * index `deliveries_leased`; without INDEXED BY the planner scans every delivery ever made to
 * group them). Leases named in `@finishing` (a JSON array of [delivery id, token]) are not in
 * flight: their requests are over and their records are on the way.
 */
export const IN_FLIGHT = `
SELECT endpoint_id, count(*) AS n FROM deliveries INDEXED BY deliveries_leased
WHERE lease_expires_at IS NOT NULL AND lease_expires_at > @now
  AND (id, lease_token) NOT IN (
    SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(@finishing))
GROUP BY endpoint_id`;

/**
 * Due deliveries of enabled endpoints, not leased, with what an attempt needs, in due order; the
 * claim reads them through a cursor and picks (pickDue) until it has its batch. Endpoints at
 * their cap (`@full`, a JSON array) are left out here so they cost nothing. The walk follows the
 * due-time index and stops after `@window` rows, so a claim is bounded by what is due, never by
 * the table. Ties in due time come in index (rowid) order: insertion order, which matches id order
 * within one process; no invariant depends on it.
 */
export const SELECT_DUE = `
SELECT d.*, ev.body AS body, e.url AS url, e.secret AS secret
FROM deliveries d INDEXED BY deliveries_due
JOIN endpoints e ON e.id = d.endpoint_id AND e.enabled = 1
JOIN events ev ON ev.id = d.event_id
WHERE d.status IN ('pending', 'awaiting_retry')
  AND d.next_attempt_at <= @now
  AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= @now)
  AND d.endpoint_id NOT IN (SELECT value FROM json_each(@full))
ORDER BY d.next_attempt_at
LIMIT @window`;

/** Leases the claimed ids (a JSON array) under one token: one statement for the whole batch. */
export const LEASE_DELIVERIES = `
UPDATE deliveries SET lease_token = @token, lease_expires_at = @expiresAt
WHERE id IN (SELECT value FROM json_each(@ids))`;

/** The leased delivery with what recording an attempt needs: its endpoint's state, and whether this attempt number is recorded already. */
export const SELECT_LEASED = `
SELECT d.*, e.consecutive_failures AS endpoint_failures, e.enabled AS endpoint_enabled,
       EXISTS (SELECT 1 FROM attempts a WHERE a.delivery_id = d.id AND a.number = @number) AS recorded
FROM deliveries d JOIN endpoints e ON e.id = d.endpoint_id
WHERE d.id = @id AND d.lease_token = @token`;
export const INSERT_ATTEMPT = `
INSERT INTO attempts (delivery_id, number, started_at, duration_ms, status_code, failure_kind, error_message,
                      response_snippet, next_attempt_at, request_headers)
VALUES (@deliveryId, @number, @startedAt, @durationMs, @statusCode, @failureKind, @errorMessage,
        @responseSnippet, @nextAttemptAt, @requestHeaders)`;
export const SELECT_ENDPOINT_BY_ID = `SELECT * FROM endpoints WHERE id = ?`;
export const SET_ENDPOINT_FAILURES = `UPDATE endpoints SET consecutive_failures = ? WHERE id = ?`;
export const DISABLE_ENDPOINT = `
UPDATE endpoints SET enabled = 0, disabled_reason = 'consecutive_failures', disabled_at = ?, updated_at = ? WHERE id = ?`;
export const HOLD_DELIVERIES = `
UPDATE deliveries SET status = 'held', updated_at = ?
WHERE endpoint_id = ? AND status IN ('pending', 'awaiting_retry') AND id <> ?`;
export const FINISH_ATTEMPT = `
UPDATE deliveries SET status = @status, attempts = @attempts, next_attempt_at = @nextAttemptAt,
  lease_token = NULL, lease_expires_at = NULL, last_failure_kind = @failureKind, last_status_code = @statusCode,
  updated_at = @now
WHERE id = @id`;

export const RELEASE_LEASE = `
UPDATE deliveries SET lease_token = NULL, lease_expires_at = NULL WHERE id = ? AND lease_token = ?`;

/**
 * When the worker should look again: the earliest due time of an unleased delivery, or the
 * earliest lease expiry (a crashed worker's delivery comes back then). Two index walks, not a scan
 * of the backlog: a million retries waiting for later cost an idle worker nothing. Deliveries of a
 * disabled endpoint are `held`, never pending, so no join with endpoints is needed.
 */
export const NEXT_DUE = `
SELECT (SELECT d.next_attempt_at FROM deliveries d INDEXED BY deliveries_due
        WHERE d.status IN ('pending', 'awaiting_retry') AND d.lease_expires_at IS NULL
        ORDER BY d.next_attempt_at LIMIT 1) AS due,
       (SELECT min(d.lease_expires_at) FROM deliveries d INDEXED BY deliveries_leased
        WHERE d.lease_expires_at IS NOT NULL AND d.status IN ('pending', 'awaiting_retry')) AS leased`;

export const REENABLE_ENDPOINT = `
UPDATE endpoints SET enabled = 1, consecutive_failures = 0, disabled_reason = NULL, disabled_at = NULL, updated_at = ?
WHERE id = ? AND account_id = ?`;
export const RESUME_HELD = `
UPDATE deliveries SET status = CASE WHEN attempts = 0 THEN 'pending' ELSE 'awaiting_retry' END,
  next_attempt_at = ?, updated_at = ?
WHERE endpoint_id = ? AND status = 'held'`;
export const REPLAY_SKIPPED = `
UPDATE deliveries SET status = CASE WHEN attempts = 0 THEN 'pending' ELSE 'awaiting_retry' END,
  next_attempt_at = ?, updated_at = ?
WHERE endpoint_id = ? AND status = 'skipped'`;

export const SELECT_DELIVERY = `SELECT * FROM deliveries WHERE id = ? AND account_id = ?`;
export const RETRY_NOW = `
UPDATE deliveries SET status = CASE WHEN attempts = 0 THEN 'pending' ELSE 'awaiting_retry' END,
  next_attempt_at = ?, updated_at = ?
WHERE id = ?`;
export const SELECT_ATTEMPTS = `SELECT * FROM attempts WHERE delivery_id = ? ORDER BY number`;
export const SELECT_EVENT = `SELECT * FROM events WHERE id = ? AND account_id = ?`;

export const PRUNE_DELIVERIES = `
DELETE FROM deliveries WHERE status IN ('delivered', 'failed', 'skipped') AND updated_at < ?`;
export const PRUNE_EVENTS = `
DELETE FROM events WHERE created_at < ? AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = events.id)`;

export const COUNT_BY_STATUS = `SELECT status, count(*) AS n FROM deliveries GROUP BY status`;
export const COUNT_DISABLED = `SELECT count(*) AS n FROM endpoints WHERE enabled = 0`;

export const LIST_DELIVERIES = `
SELECT * FROM deliveries
WHERE account_id = @accountId
  AND (@endpointId IS NULL OR endpoint_id = @endpointId)
  AND (@status IS NULL OR status = @status)
  AND (@event IS NULL OR event_name = @event)
  AND (@cursor IS NULL OR id < @cursor)
ORDER BY id DESC
LIMIT @limit`;
