/**
 * The domain's rules where a statement must apply them to many rows, or to rows it locks, in SQL:
 * the one SQL copy of each, built from the domain's own constants. Valid in SQLite and PostgreSQL
 * alike; test/sql-rules.test.ts (and the PostgreSQL store's tests) hold them equal to the domain.
 */

import { ATTEMPTS_KEPT } from '../domain/attempts-kept.js';
import {
  CLAIMABLE_STATUSES,
  FINAL_STATUSES,
  QUEUED_STATUSES,
  resumeStatus,
} from '../domain/delivery-state.js';
import { newDelivery } from './new-delivery.js';

/** A SQL string of `value`, one of the domain's own constants (a status: no quote in it). */
export const sqlString = (value: string) => `'${value}'`;

const list = (values: readonly string[]) => `(${values.map(sqlString).join(', ')})`;

/** A delivery's attempts past its kept ones deleted at once, at most: the oldest first. */
const TRIMMED_AT_ONCE = 1_000;

/**
 * Deletes the attempts of delivery `id`, whose attempts number `attempts` (placeholders), that fall
 * out of its kept ones (ATTEMPTS_KEPT) once one more is made (attemptFallsOut says when any does):
 * the oldest one, or up to TRIMMED_AT_ONCE of a delivery that gathered more before they were kept
 * to a number, so that no trim deletes an unbounded number on the event loop.
 */
export function deleteAttemptsPastKeptSql(id: string, attempts: string): string {
  // Repeated outside the subquery too, so the delete reads only that range of the key.
  const past = `delivery_id = ${id} AND number <= ${attempts} - ${ATTEMPTS_KEPT - 1}`;
  return `
DELETE FROM attempts WHERE ${past}
  AND number IN (SELECT number FROM attempts WHERE ${past} ORDER BY number LIMIT ${TRIMMED_AT_ONCE})`;
}

/**
 * An endpoint whose deletion has not begun: a deletion marks the endpoint first, and from then on
 * every read of endpoints passes over it while its deliveries go in steps (design D78).
 */
export const KEPT_ENDPOINT_SQL = 'deleted_at IS NULL';

/**
 * Up to `limit` ids of the deliveries of the endpoint `endpoint` (placeholders), its queued ones
 * first (pending, awaiting retry, held), each status read from the index by endpoint and status: a
 * deletion's steps take those first (design D78), so that a marked endpoint's due deliveries weigh
 * on claims, the next due time and the metrics for as short a time as may be. An id may come twice.
 */
export const endpointDeliveriesQueuedFirstSql = (endpoint: string, limit: string) =>
  `${[...QUEUED_STATUSES.map((s) => `status = ${sqlString(s)}`), 'TRUE']
    .map(
      (only, i) =>
        `SELECT id FROM (SELECT id FROM deliveries WHERE endpoint_id = ${endpoint} AND ${only} LIMIT ${limit}) AS q${i}`,
    )
    .join('\nUNION ALL ')}\nLIMIT ${limit}`;

/** `status IN ('pending', 'awaiting_retry')`: the statuses a worker may claim. */
export const CLAIMABLE_SQL = list(CLAIMABLE_STATUSES);

/**
 * `status IN ('pending', 'awaiting_retry', 'held')`: the statuses the metrics count. The SQLite
 * store states them with oneOfSql instead.
 */
export const QUEUED_SQL = list(QUEUED_STATUSES);

/**
 * `status IN ('delivered', 'failed', 'skipped')`: the statuses retention may delete. The SQLite
 * store states them with oneOfSql instead.
 */
export const FINAL_SQL = list(FINAL_STATUSES);

/**
 * `column` is one of `values`, one comparison each: how the SQLite store states three statuses or
 * more (design D71). Its partial indexes state their conditions so (SQLite migration 18), and the
 * statements that read through one repeat its condition: SQLite uses a partial index only for a
 * statement whose condition implies the index's, which `status = @status` alone does not.
 */
const oneOfSql = (column: string, values: readonly string[]) =>
  `(${values.map((value) => `${column} = ${sqlString(value)}`).join(' OR ')})`;

/** `column` is a queued status, as oneOfSql states it: the condition of SQLite's index of them. */
export const isQueuedSql = (column: string) => oneOfSql(column, QUEUED_STATUSES);

/** `column` is a final status, as oneOfSql states it: the condition of SQLite's index of them. */
export const isFinalSql = (column: string) => oneOfSql(column, FINAL_STATUSES);

/** resumeStatus(attempts) over a row's `attempts` column: how a held or replayed delivery resumes. */
export const RESUME_STATUS_SQL = `CASE WHEN attempts = 0 THEN '${resumeStatus(0)}' ELSE '${resumeStatus(1)}' END`;

/**
 * decideTransition's hold, where the endpoint's state is read from the delivery row: a disabling
 * or a pause holds every claimable delivery of its endpoint, and a re-enabling or a resume releases
 * them, in steps that go on until none is left to move (design D34), so a row found `held` under
 * its lease belongs to a disabled or paused endpoint, or to one whose steps release it later; a
 * retry written before a hold's step reached its row is held by a later step. `next` is the
 * decided status.
 */
export const heldIfDisabledSql = (next: string, current: string) =>
  `CASE WHEN ${next} = 'awaiting_retry' AND ${current} = 'held' THEN 'held' ELSE ${next} END`;

/**
 * The previous secret of an endpoint row while it is valid at `now` (previousSecretValid: before
 * its expiry, never at or after it), else NULL: a claim never hands out an expired one (design D38).
 * `e` is the endpoints row's alias.
 */
export const previousSecretSql = (e: string, now: string) =>
  `CASE WHEN ${e}.previous_secret_expires_at > ${now} THEN ${e}.previous_secret END`;

/**
 * What an attempt needs beside the delivery's own columns and its event's body (rows.ts toClaimed
 * reads them), from the endpoint `e`: one list for both stores' claims. The body is read apart,
 * once per event (design D72).
 */
export const attemptColumnsSql = (now: string) =>
  `e.url AS url, e.origin AS origin, e.secret AS secret,
       ${previousSecretSql('e', now)} AS previous_secret, e.previous_secret_expires_at,
       e.standard_webhooks`;

const made = (enabled: boolean, paused: boolean) =>
  newDelivery(
    { id: '', accountId: '', name: '', body: new Uint8Array(), createdAt: 1 },
    { id: '', enabled, paused },
    '',
  );

/**
 * newDelivery's status and due time over an endpoint's `enabled` and `paused` and the event's
 * `created_at`: what a publish makes for an enabled endpoint, a paused one and a disabled one.
 */
export const newDeliverySql = (enabled: string, paused: string, createdAt: string) => ({
  status: `CASE WHEN NOT (${enabled}) THEN '${made(false, false).status}' WHEN ${paused} THEN '${made(true, true).status}' ELSE '${made(true, false).status}' END`,
  nextAttemptAt: `CASE WHEN ${enabled} THEN ${createdAt} END`,
});
