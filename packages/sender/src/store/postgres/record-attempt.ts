/**
 * Records attempts (design I3, I4, I5). An attempt that may disable its endpoint (mayDisable) runs
 * the locked transaction: endpoint and delivery locked, decideTransition on what they hold, its
 * result written. Every other attempt (nearly all) goes into one batched statement with those that
 * finish together; there the transition is decided in the process, and the one part that needs the
 * row's newest state, the hold of a retry whose endpoint was disabled meanwhile, is the SQL copy
 * heldIfDisabledSql.
 */
import { attemptNotice } from '../../domain/operator-notice.js';
import {
  decideTransition,
  mayDisable,
  type Transition,
  type TransitionState,
} from '../../domain/transition.js';
import { attemptApplied } from '../attempt-applied.js';
import { createBatcher, type Settled } from '../batcher.js';
import { leaseKey, leaseKeySql } from '../lease.js';
import type { AttemptApplied, AttemptResult } from '../port.js';
import { PRUNE_STEP } from '../prune-steps.js';
import type { AttemptRecord, EndpointRecord } from '../records.js';
import { attemptValues, toEndpoint } from '../rows.js';
import { heldIfDisabledSql } from '../sql-rules.js';
import type { Pg } from './connection.js';
import { insertNotice } from './operator-notices.js';
import { listAndMove } from './settle-queue.js';
import type { LeaseVacuum } from './vacuum-leases.js';

/** The batch's lease keys (leaseKey), in its order: an array made from `$1` and `$2`, once where it is used. */
const BATCH_KEYS = `ARRAY(SELECT ${leaseKeySql('t.id', 't.token')}
  FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t (id, token, n) ORDER BY t.n)`;
/**
 * The place among BATCH_KEYS of the lease `l`'s key (a scan of the array, a string compared at each
 * step), NULL when it is not there. The attempt at that place must have the lease's delivery id as
 * well: a key being the id, a space and the token, its token is then the lease's too, whatever
 * spaces either part holds.
 */
const KEY_PLACE = `array_position(${BATCH_KEYS}, ${leaseKeySql('l.delivery_id', 'l.token')})`;

/**
 * The record of a batch of attempts that cannot disable their endpoints — successes (which reset
 * the failure count) and failures that only schedule a retry under per-delivery counting — as one
 * statement: one round trip for every attempt that finished together, instead of six each.
 *
 * Endpoint rows are not read or locked: locking them made every batch wait for the one before,
 * since a batch touches most endpoints. Whether a retry is held is read from the delivery itself:
 * a disabling holds every pending delivery of its endpoint, in flight or not, and a re-enabling
 * resumes them, in steps that go on until none is left to move (settle-queue.ts), so a retry
 * recorded before a step reached its row is moved by a later one. `fin` updates
 * the rows `locked` holds, so it computes from their newest version — a disabling or re-enabling
 * that committed while this statement waited for a lock is seen, where the snapshot's
 * `endpoints.enabled` would be stale (a retry held on an enabled endpoint is never resumed).
 * The only endpoint write, the reset, locks a row only when its count is not already 0. Rarely, a
 * reset and a disabling of the same endpoint lock in opposite orders; PostgreSQL then aborts one
 * as a deadlock and the caller runs the batch again.
 *
 * Per attempt the lease is compared and set as in LOCK_LEASED_DELIVERY (design I3), and the
 * lease row is deleted. An attempt is matched to its lease by delivery id and token together: a
 * batch can hold two attempts of one delivery (the first sent under a lease that ran out, the
 * second under the lease that took over), and only the second may be recorded. A duplicate
 * attempt number inserts nothing and leaves the delivery as it was (design I4) — only its lease
 * goes, and a lease still held cannot have its attempt number recorded already; the reset commits
 * with the attempt (design I5).
 *
 * The parts of the statement meet through an array read once (`= ANY (ARRAY(…))`) or a table's
 * key, never by joining one part's rows to another's: planned generically, the statement guesses
 * ten rows for each part, and such a join became a nested loop reading one part again for each row
 * of the other, work growing with the square of the batch (a fifth of the statement's time at 26
 * attempts). The attempts and the leases meet through the lease's key (leaseKey): `leased` ends the
 * leases whose keys are among the batch's (BATCH_KEYS) and answers each one's place there, and `ended` reads that attempt's columns from the arrays at that place, with
 * the endpoint from its lease. Joined to the attempts instead, the leases were read first under the
 * plan made for the leases table's statistics in bench/store-cycle.mjs, and the attempts again for
 * each lease: its database CPU per delivery is 0.91–0.93× what it was with claims of 32, 0.83× with
 * claims of 128. Finding a key still scans the batch's keys (KEY_PLACE), so a batch's work there grows with its
 * square too, but as strings compared, not as a part's rows read again.
 * Returns one row per applied attempt, with its lease token; a lost lease returns none.
 */
export const RECORD_ATTEMPTS_FAST = `
WITH locked AS MATERIALIZED (
  SELECT d.id FROM deliveries d
  WHERE d.id = ANY ($1::text[])
  ORDER BY d.id
  FOR UPDATE OF d
),
leased AS (
  DELETE FROM leases l
  WHERE l.delivery_id = ANY (ARRAY(SELECT id FROM locked))
    AND ($1::text[])[${KEY_PLACE}] = l.delivery_id
  RETURNING ${KEY_PLACE} AS k, l.endpoint_id
),
ended AS MATERIALIZED (
  SELECT ($1::text[])[k] AS delivery_id, ($2::text[])[k] AS lease_token, ($3::int[])[k] AS number,
         ($4::bigint[])[k] AS started_at, ($5::int[])[k] AS duration_ms, ($6::int[])[k] AS status_code,
         ($7::text[])[k] AS failure_kind, ($8::text[])[k] AS error_message, ($9::text[])[k] AS response_snippet,
         ($10::bigint[])[k] AS next_attempt_at, ($11::text[])[k] AS request_headers, ($12::text[])[k] AS status,
         ($13::int[])[k] AS attempts, ($14::boolean[])[k] AS reset, ($15::bigint[])[k] AS now, endpoint_id
  FROM leased
),
ins AS (
  INSERT INTO attempts (delivery_id, number, started_at, duration_ms, status_code, failure_kind, error_message,
                        response_snippet, next_attempt_at, request_headers, endpoint_id)
  SELECT delivery_id, number, started_at, duration_ms, status_code, failure_kind, error_message,
         response_snippet, next_attempt_at, request_headers, endpoint_id
  FROM ended
  ON CONFLICT (delivery_id, number) DO NOTHING
  RETURNING delivery_id
),
applied AS MATERIALIZED (
  SELECT l.* FROM ended l WHERE l.delivery_id = ANY (ARRAY(SELECT delivery_id FROM ins))
),
fin AS (
  UPDATE deliveries d
  SET status = ${heldIfDisabledSql('a.status', 'd.status')},
      attempts = a.attempts, next_attempt_at = a.next_attempt_at,
      last_failure_kind = a.failure_kind, last_status_code = a.status_code, updated_at = a.now
  FROM applied a
  WHERE d.id = a.delivery_id
  RETURNING d.id, d.status, d.endpoint_id, a.lease_token AS token, a.reset
),
reset AS (
  UPDATE endpoints e SET consecutive_failures = 0
  WHERE e.id IN (SELECT f.endpoint_id FROM fin f WHERE f.reset) AND e.consecutive_failures <> 0
)
SELECT id, token, status FROM fin`;

/**
 * Locks the endpoint of the delivery `$1` while lease `$2` holds. Endpoint before delivery, the
 * order every transaction here takes them in, so concurrent attempts of one endpoint queue up
 * instead of losing failure-count increments or deadlocking over its held deliveries.
 */
const LOCK_ENDPOINT_OF_LEASED = `
SELECT e.* FROM endpoints e
WHERE e.id = (SELECT l.endpoint_id FROM leases l WHERE l.delivery_id = $1 AND l.token = $2)
FOR UPDATE OF e`;
/**
 * Compare-and-set, part 1: the delivery, locked, while its lease is still `$2` (the lease row is
 * locked too: a claimer taking over an expired lease waits for this transaction, then sees it gone).
 */
const LOCK_LEASED_DELIVERY = `
SELECT d.* FROM deliveries d JOIN leases l ON l.delivery_id = d.id
WHERE d.id = $1 AND l.token = $2
FOR UPDATE OF d, l`;
/** Zero rows inserted means this attempt number is already recorded (design I4). */
const INSERT_ATTEMPT = `
INSERT INTO attempts (delivery_id, number, started_at, duration_ms, status_code, failure_kind, error_message,
                      response_snippet, next_attempt_at, request_headers, endpoint_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, (SELECT endpoint_id FROM deliveries WHERE id = $1))
ON CONFLICT (delivery_id, number) DO NOTHING`;
const SET_ENDPOINT_FAILURES = `UPDATE endpoints SET consecutive_failures = $2 WHERE id = $1`;
const DISABLE_ENDPOINT = `
UPDATE endpoints SET enabled = false, disabled_reason = $3, disabled_at = $2, updated_at = $2
WHERE id = $1
RETURNING *`;
const FINISH_ATTEMPT = `
UPDATE deliveries SET status = $2, attempts = $3, next_attempt_at = $4,
  last_failure_kind = $5, last_status_code = $6, updated_at = $7
WHERE id = $1`;
const DELETE_LEASE = `DELETE FROM leases WHERE delivery_id = $1`;

/** An endpoint the batched path never reads: any enabled one with a count it can only keep or reset. */
const UNREAD_ENDPOINT = { enabled: true, consecutiveFailures: 1 };

/** decideTransition for the attempt, and the attempt's row with the due time it decides. */
function decide({ lease, attempt, rules, now, retryAfter }: AttemptResult, state: TransitionState) {
  const t = decideTransition(
    state,
    { succeeded: attempt.failureKind === null, finishedAt: now, statusCode: attempt.statusCode, retryAfter },
    rules,
  );
  const record: AttemptRecord = {
    ...attempt,
    deliveryId: lease.deliveryId,
    nextAttemptAt: t.delivery.nextAttemptAt,
  };
  return { t, record };
}

/**
 * RECORD_ATTEMPTS_FAST's parameters for `batch` ($1 to $15 the attempts' columns, the last its
 * own `now`: one attempt's time must not be another's, design D17), and the transition decided in the
 * process for each attempt (its endpoint is never read: see UNREAD_ENDPOINT).
 */
export function recordParams(batch: AttemptResult[]): { params: unknown[]; decided: Transition[] } {
  const columns: unknown[][] = Array.from({ length: 15 }, () => []);
  const decided = batch.map((result) => {
    const { t, record } = decide(result, {
      attemptsBefore: result.attempt.number - 1,
      endpoint: UNREAD_ENDPOINT,
    });
    const { lease } = result;
    const values = [
      lease.deliveryId,
      lease.leaseToken,
      ...attemptValues(record, record.nextAttemptAt).slice(1),
      t.delivery.status,
      t.delivery.attempts,
      t.endpoint.consecutiveFailures === 0,
      result.now,
    ];
    for (const [i, v] of values.entries()) columns[i]!.push(v);
    return t;
  });
  return { params: columns, decided };
}

export function recordAttempt(
  pg: Pg,
  vacuum: LeaseVacuum,
): (result: AttemptResult) => Promise<AttemptApplied> {
  const recordBatched = createBatcher(async (batch: AttemptResult[]): Promise<Settled<AttemptApplied>[]> => {
    const { params, decided } = recordParams(batch);
    const applied = await pg.deadlockRetried(() =>
      pg.prepared('record_attempts_fast', RECORD_ATTEMPTS_FAST, params),
    );
    vacuum.ended(applied.length);
    // Keyed by lease, not delivery: a batch can hold two attempts of one delivery.
    const byLease = new Map(applied.map((r) => [leaseKey(r.id as string, r.token as string), r.status]));
    return batch.map(({ lease }, i): Settled<AttemptApplied> => {
      const status = byLease.get(leaseKey(lease.deliveryId, lease.leaseToken));
      return {
        ok: true,
        value: status
          ? {
              applied: true,
              status: status as AttemptApplied['status'],
              nextAttemptAt: decided[i]!.delivery.nextAttemptAt,
            }
          : { applied: false },
      };
    });
  });

  const recordLocked = (result: AttemptResult) =>
    pg.tx(async (client): Promise<AttemptApplied> => {
      const { lease, attempt, now } = result;
      // Endpoint first, then the delivery: the lock order of every transaction here.
      const endpointRow = (await client.query(LOCK_ENDPOINT_OF_LEASED, [lease.deliveryId, lease.leaseToken]))
        .rows[0];
      if (!endpointRow) return { applied: false };
      // Compare-and-set (design I3): the lease must still be ours now that the row is locked.
      const deliveryRow = (await client.query(LOCK_LEASED_DELIVERY, [lease.deliveryId, lease.leaseToken]))
        .rows[0];
      if (!deliveryRow) return { applied: false };
      const endpoint = toEndpoint(endpointRow);
      const { t, record } = decide(result, { attemptsBefore: Number(deliveryRow.attempts), endpoint });
      const inserted = await client.query(INSERT_ATTEMPT, attemptValues(record, record.nextAttemptAt));
      if (inserted.rowCount === 0) return { applied: false }; // design I4: nothing was written

      // design I5: the failure count, the disabling and the holding commit with the attempt.
      if (t.endpoint.consecutiveFailures !== endpoint.consecutiveFailures) {
        await client.query(SET_ENDPOINT_FAILURES, [endpoint.id, t.endpoint.consecutiveFailures]);
      }
      let disabledEndpoint: EndpointRecord | undefined;
      if (t.endpoint.disable) {
        disabledEndpoint = toEndpoint(
          (await client.query(DISABLE_ENDPOINT, [endpoint.id, now, t.endpoint.disabledReason])).rows[0],
        );
        // The disabling holds the endpoint's other claimable deliveries (design D2): the first step
        // here, the rest in steps of their own (settle-queue.ts); this one's status is written below.
        await listAndMove(client, pg.schema, endpoint, 'disable', { now, limit: PRUNE_STEP });
      }
      // design D50: the operator's notice commits with the change it reports.
      const notice = attemptNotice(t, endpoint, result.rules, now);
      if (notice) await insertNotice(client, notice);
      await client.query(FINISH_ATTEMPT, [
        lease.deliveryId,
        t.delivery.status,
        t.delivery.attempts,
        t.delivery.nextAttemptAt,
        attempt.failureKind,
        attempt.statusCode,
        now,
      ]);
      await client.query(DELETE_LEASE, [lease.deliveryId]);
      vacuum.ended(1);
      return attemptApplied(t, endpoint.consecutiveFailures, disabledEndpoint, notice !== null);
    });

  return (result) =>
    mayDisable(
      result.attempt.number - 1,
      result.attempt.failureKind === null,
      result.rules,
      result.attempt.statusCode,
    )
      ? recordLocked(result)
      : recordBatched(result);
}
