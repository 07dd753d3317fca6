/**
 * Records attempts (design I3, I4, I5): per attempt, compare the lease, insert the attempt, and
 * write what decideTransition makes of it to the delivery and its endpoint. Attempts finishing
 * together share one write transaction (one WAL commit): under load the commit, not the
 * statements, was the cost.
 */
import { attemptNotice } from '../../domain/operator-notice.js';
import { decideTransition } from '../../domain/transition.js';
import { attemptApplied } from '../attempt-applied.js';
import type { AttemptApplied, AttemptResult } from '../port.js';
import { PRUNE_STEP } from '../prune-steps.js';
import type { EndpointRecord } from '../records.js';
import { attemptValues, type Row, toEndpoint } from '../rows.js';
import type { SqliteDb } from './database.js';
import { dropDue } from './endpoint-due.js';
import { insertNotice } from './operator-notices.js';
import { listAndMove } from './settle-queue.js';
import type { TxMemo, WriteQueue } from './write-queue.js';

/** The leased delivery with its endpoint's state, and whether this attempt number is recorded already. */
const SELECT_LEASED = `
SELECT d.id, d.endpoint_id, d.attempts, e.consecutive_failures AS endpoint_failures, e.enabled AS endpoint_enabled,
       e.paused AS endpoint_paused, e.account_id AS endpoint_account, e.url AS endpoint_url,
       EXISTS (SELECT 1 FROM attempts a WHERE a.delivery_id = d.id AND a.number = ?) AS recorded
FROM deliveries d JOIN endpoints e ON e.id = d.endpoint_id
WHERE d.id = ? AND d.lease_token = ?`;
const INSERT_ATTEMPT = `
INSERT INTO attempts (delivery_id, number, started_at, duration_ms, status_code, failure_kind, error_message,
                      response_snippet, next_attempt_at, request_headers, endpoint_id)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
const SET_ENDPOINT_FAILURES = `UPDATE endpoints SET consecutive_failures = ? WHERE id = ?`;
const DISABLE_ENDPOINT = `
UPDATE endpoints SET enabled = 0, disabled_reason = @reason, disabled_at = @now, updated_at = @now
WHERE id = @id RETURNING *`;
const FINISH_ATTEMPT = `
UPDATE deliveries SET status = ?, attempts = ?, next_attempt_at = ?,
  lease_token = NULL, lease_expires_at = NULL, last_failure_kind = ?, last_status_code = ?, updated_at = ?
WHERE id = ?`;

/**
 * `memo`: what the transaction's publishes have read (a disabling makes its account's endpoints
 * stale), and the endpoints to settle once its writes are done.
 */
function recordOne(
  db: SqliteDb,
  { lease, attempt, rules, now, retryAfter }: AttemptResult,
  memo: TxMemo,
): AttemptApplied {
  const row = db.st(SELECT_LEASED).get(attempt.number, lease.deliveryId, lease.leaseToken) as Row | undefined;
  if (!row || row.recorded === 1) return { applied: false }; // lease lost (design I3) or recorded (I4)
  const failures = row.endpoint_failures as number;
  const t = decideTransition(
    {
      attemptsBefore: row.attempts as number,
      endpoint: {
        enabled: row.endpoint_enabled === 1,
        consecutiveFailures: failures,
        paused: row.endpoint_paused === 1,
      },
    },
    { succeeded: attempt.failureKind === null, finishedAt: now, statusCode: attempt.statusCode, retryAfter },
    rules,
  );
  const endpointId = row.endpoint_id as string;
  // The attempt belongs to the delivery whose lease was checked, whatever the record says.
  db.st(INSERT_ATTEMPT).run(
    ...attemptValues(attempt, t.delivery.nextAttemptAt, lease.deliveryId),
    endpointId,
  );
  if (t.endpoint.consecutiveFailures !== failures) {
    db.st(SET_ENDPOINT_FAILURES).run(t.endpoint.consecutiveFailures, endpointId);
  }
  let disabledEndpoint: EndpointRecord | undefined;
  if (t.endpoint.disable) {
    disabledEndpoint = toEndpoint(
      db.st(DISABLE_ENDPOINT).get({ id: endpointId, now, reason: t.endpoint.disabledReason }) as Row,
    );
    // The disabling holds the endpoint's other claimable deliveries (design D2): the first step
    // here, the rest in steps of their own (settle-queue.ts); this one's status is written below.
    listAndMove(db, disabledEndpoint, 'disable', { now, limit: PRUNE_STEP });
    memo.endpointsChanged(disabledEndpoint.accountId);
  }
  // design D50: the operator's notice commits with the change it reports.
  const notice = attemptNotice(
    t,
    { id: endpointId, accountId: row.endpoint_account as string, url: row.endpoint_url as string },
    rules,
    now,
  );
  if (notice) insertNotice(db, notice);
  db.st(FINISH_ATTEMPT).run(
    t.delivery.status,
    t.delivery.attempts,
    t.delivery.nextAttemptAt,
    attempt.failureKind,
    attempt.statusCode,
    now,
    lease.deliveryId,
  );
  // The endpoint's next due time moves on once nothing of its is due (endpoint-due.ts), settled
  // once the transaction's writes are done.
  if (t.endpoint.disable) dropDue(db, endpointId);
  else memo.settleDue(endpointId, now);
  return attemptApplied(t, failures, disabledEndpoint, notice !== null);
}

/** Each record is a write of the turn's transaction (write-queue.ts): one commit with the claims and publishes beside it. */
export function recordAttempt(db: SqliteDb, write: WriteQueue) {
  return async (result: AttemptResult): Promise<AttemptApplied> =>
    (await write((memo) => recordOne(db, result, memo))).value;
}
