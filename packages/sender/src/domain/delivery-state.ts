/**
 * The delivery state machine (design R11 to R13, design D4) as a pure function of
 * (state, outcome, now). The worker moves bytes; this decides what they mean.
 */
import { delayAfterAttempt, type RetrySchedule } from './schedule.js';

/**
 * `pending` (no attempt yet) → `delivered` | `awaiting_retry` → … → `delivered` | `failed`.
 * `held`: the endpoint is disabled; the delivery waits, untouched, for re-enabling.
 * `skipped`: the event arrived while the endpoint was disabled; replayable on re-enable.
 */
export type DeliveryStatus = 'pending' | 'awaiting_retry' | 'delivered' | 'failed' | 'held' | 'skipped';

export const DELIVERY_STATUSES: readonly DeliveryStatus[] = [
  'pending',
  'awaiting_retry',
  'delivered',
  'failed',
  'held',
  'skipped',
];

/** Statuses a worker may claim when due: the rest are final, or wait for their endpoint. */
export const CLAIMABLE_STATUSES = ['pending', 'awaiting_retry'] as const satisfies readonly DeliveryStatus[];
export const isClaimable = (status: DeliveryStatus): boolean =>
  (CLAIMABLE_STATUSES as readonly DeliveryStatus[]).includes(status);

/** Statuses that wait in the queue: due now or later, or held for their endpoint. The metrics count these. */
export const QUEUED_STATUSES = [
  'pending',
  'awaiting_retry',
  'held',
] as const satisfies readonly DeliveryStatus[];
export type QueuedStatus = (typeof QUEUED_STATUSES)[number];

/** Statuses no attempt follows (unless retried or replayed by hand): what retention may delete. */
export const FINAL_STATUSES = ['delivered', 'failed', 'skipped'] as const satisfies readonly DeliveryStatus[];

/** Why an attempt failed (design D4). */
export type FailureKind =
  | 'timeout'
  | 'dns'
  | 'connect'
  | 'tls'
  | 'http_status'
  | 'blocked_address'
  | 'response_too_large';

export const FAILURE_KINDS: readonly FailureKind[] = [
  'timeout',
  'dns',
  'connect',
  'tls',
  'http_status',
  'blocked_address',
  'response_too_large',
];

export type AttemptOutcome =
  | { ok: true; statusCode: number }
  | {
      ok: false;
      kind: FailureKind;
      statusCode?: number | undefined;
      message: string;
      /**
       * For the operator's log alone, never stored: why the connection's address was refused
       * (checkAddress's reason), where the customer reads only that the name gives no public
       * address (design D17).
       */
      refused?: string;
      /**
       * The name gave no public address (it does not exist, or its address was refused): no
       * request was made, and the attempt is recorded as taking no time, since how long the
       * lookup took would tell a name of the machine's own from one the DNS lacks (design D17).
       */
      noPublicAddress?: true;
    };

export interface AttemptDecision {
  status: 'delivered' | 'awaiting_retry' | 'failed';
  /** Attempts made, this one included. */
  attempts: number;
  /** When the next attempt is due; null once the delivery is final. */
  nextAttemptAt: number | null;
  /** Set when the delivery reached a final state with this attempt. */
  final: 'delivered' | 'failed' | null;
}

/** design R11: any 2xx is success. 3xx is a failure: redirects are never followed. */
export function isSuccessStatus(statusCode: number): boolean {
  return statusCode >= 200 && statusCode <= 299;
}

/**
 * What an attempt's outcome does to a delivery. `attemptsBefore` counts the attempts already made.
 * design R11 to R13: 2xx → delivered; otherwise awaiting_retry with the next delay from the failure time,
 * until the 5th retry fails → failed.
 */
export function decideAfterAttempt(
  attemptsBefore: number,
  outcome: AttemptOutcome | { ok: boolean },
  finishedAt: number,
  schedule: RetrySchedule,
): AttemptDecision {
  const attempts = attemptsBefore + 1;
  if (outcome.ok) return { status: 'delivered', attempts, nextAttemptAt: null, final: 'delivered' };
  const delay = delayAfterAttempt(schedule, attempts);
  if (delay === null) return { status: 'failed', attempts, nextAttemptAt: null, final: 'failed' };
  return { status: 'awaiting_retry', attempts, nextAttemptAt: finishedAt + delay, final: null };
}

/** The status a held or replayed delivery resumes with. */
export function resumeStatus(attempts: number): 'pending' | 'awaiting_retry' {
  return attempts === 0 ? 'pending' : 'awaiting_retry';
}
