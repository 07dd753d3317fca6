/**
 * What a receiver may ask of the schedule by its answer (design D40, D41): a `429` or `503` with
 * `Retry-After` moves the next attempt no earlier than asked, capped at the schedule's longest
 * step and never adding an attempt; a `410 Gone` disables the endpoint at once when the operator
 * turns that on. Pure: the value of the header and the time in, a delay out.
 */
import type { RetrySchedule } from './schedule.js';

export interface ReceiverPolicy {
  /** Honour `Retry-After` on a 429 or 503 (design D40). Default true. */
  honourRetryAfter: boolean;
  /** A `410 Gone` disables the endpoint at once (design D41). Default false: it is one failure. */
  disableOnGone: boolean;
}

export const DEFAULT_RECEIVER_POLICY: ReceiverPolicy = Object.freeze({
  honourRetryAfter: true,
  disableOnGone: false,
});

/** The answers whose `Retry-After` is honoured: too many requests, and unavailable for now. */
export const RETRY_AFTER_STATUSES: readonly number[] = Object.freeze([429, 503]);

export const GONE_STATUS = 410;

/** Larger delta-seconds are read as this many: far past any cap, and no overflow. */
const MAX_DELTA_SECONDS = 10 * 365 * 24 * 60 * 60;

/**
 * A `Retry-After` value as milliseconds from `now`: delta-seconds (`120`) or an HTTP date
 * (`Wed, 21 Oct 2026 07:28:00 GMT`; a date in the past is 0). `null` when absent or malformed.
 *
 * @example
 * parseRetryAfter('120', now); // 120_000
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | null {
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (/^\d{1,12}$/.test(text)) return Math.min(Number(text), MAX_DELTA_SECONDS) * 1000;
  // An HTTP date names its day and month, and ends in GMT (RFC 9110 section 5.6.7); anything else,
  // a negative or fractional number included, is not a Retry-After value.
  if (!/^[A-Za-z]{3}.*\d{2}:\d{2}:\d{2}/.test(text)) return null;
  const at = Date.parse(text);
  if (!Number.isFinite(at)) return null;
  return Math.max(0, at - now);
}

/** The most a receiver's `Retry-After` is honoured: the longest step of the schedule, 8 h by default. */
export function retryAfterCapMs(schedule: RetrySchedule): number {
  return Math.round(Math.max(0, ...schedule.delaysMs) * (schedule.timeScale ?? 1));
}

/**
 * When the next attempt is due once the receiver's wish is heeded: the scheduled time, or later
 * if a 429 or 503 asked for later, by at most the cap from the failure. Never earlier.
 */
export function heededRetryAt(
  scheduledAt: number,
  answer: { statusCode?: number | null; retryAfter?: string | null; finishedAt: number },
  schedule: RetrySchedule,
  policy: ReceiverPolicy,
): number {
  if (!policy.honourRetryAfter) return scheduledAt;
  if (answer.statusCode == null || !RETRY_AFTER_STATUSES.includes(answer.statusCode)) return scheduledAt;
  const asked = parseRetryAfter(answer.retryAfter, answer.finishedAt);
  if (asked === null) return scheduledAt;
  return Math.max(scheduledAt, answer.finishedAt + Math.min(asked, retryAfterCapMs(schedule)));
}

/** Whether this answer disables its endpoint at once under the policy (design D41). */
export function isGoneAnswer(statusCode: number | null | undefined, policy: ReceiverPolicy): boolean {
  return policy.disableOnGone && statusCode === GONE_STATUS;
}
