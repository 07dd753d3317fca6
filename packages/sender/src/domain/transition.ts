/**
 * What one attempt does to its delivery and to its endpoint, as one pure function of (state,
 * outcome, time, rules): the delivery's next status and due time (a receiver's `Retry-After`
 * heeded, design D40), the endpoint's failure count, whether the endpoint is disabled now (and
 * why: design D1, D41), and the hold of a retry whose endpoint is disabled. The stores read the
 * state inside their transaction, call it, and write what it returns (design I5).
 */
import { decideAfterAttempt } from './delivery-state.js';
import { type DisablePolicy, decideEndpoint } from './disable-rule.js';
import type { NoticeRules } from './notice-rules.js';
import { noticeAfterAttempt } from './operator-notice.js';
import {
  DEFAULT_RECEIVER_POLICY,
  heededRetryAt,
  isGoneAnswer,
  type ReceiverPolicy,
} from './receiver-hints.js';
import type { RetrySchedule } from './schedule.js';

export interface TransitionRules {
  schedule: RetrySchedule;
  policy: DisablePolicy;
  /** What a receiver's answer may ask (design D40, D41); DEFAULT_RECEIVER_POLICY when absent. */
  receiver?: ReceiverPolicy;
  /** When the operator is notified (design D50); absent, no notice is written. */
  notices?: NoticeRules;
}

/** Why an endpoint was disabled automatically. */
export type DisabledReason = 'consecutive_failures' | 'gone';

/** An attempt's result as the transition reads it. */
export interface AttemptAnswer {
  succeeded: boolean;
  finishedAt: number;
  /** The receiver's status code; null or absent when it did not answer. */
  statusCode?: number | null;
  /** The receiver's `Retry-After` header, as sent. */
  retryAfter?: string | null;
}

export interface TransitionState {
  /** Attempts made before this one. */
  attemptsBefore: number;
  /**
   * The endpoint as the transaction reads it, before this attempt. `paused`: an attempt that was in
   * flight when its endpoint was paused; a retry it schedules is held with the others (design D34).
   */
  endpoint: { enabled: boolean; consecutiveFailures: number; paused?: boolean };
}

export interface Transition {
  delivery: {
    /** `held` when a retry is due but the endpoint is (or is now) disabled, or paused (design D2, D34). */
    status: 'delivered' | 'awaiting_retry' | 'failed' | 'held';
    /** Attempts made, this one included. */
    attempts: number;
    /** When the next attempt is due; null once the delivery is final. Kept while held. */
    nextAttemptAt: number | null;
    final: 'delivered' | 'failed' | null;
  };
  endpoint: {
    consecutiveFailures: number;
    /** This attempt disables the endpoint: its other claimable deliveries are held with it. */
    disable: boolean;
    /** Why, when `disable`; null otherwise. */
    disabledReason: DisabledReason | null;
  };
  /** The operator notice this attempt causes (design D50), written in the same transaction. */
  notice: 'endpoint.failing' | 'endpoint.disabled' | null;
}

/**
 * @example
 * const t = decideTransition(
 *   { attemptsBefore: 0, endpoint: { enabled: true, consecutiveFailures: 0 } },
 *   { succeeded: false, finishedAt: now },
 *   { schedule: DEFAULT_SCHEDULE, policy: DEFAULT_DISABLE_POLICY },
 * );
 * // t.delivery → { status: 'awaiting_retry', attempts: 1, nextAttemptAt: now + 60_000, final: null }
 */
export function decideTransition(
  state: TransitionState,
  result: AttemptAnswer,
  rules: TransitionRules,
): Transition {
  const receiver = rules.receiver ?? DEFAULT_RECEIVER_POLICY;
  const decision = decideAfterAttempt(
    state.attemptsBefore,
    { ok: result.succeeded },
    result.finishedAt,
    rules.schedule,
  );
  // design D40: a retry may come later than scheduled when the receiver asks, never earlier, and
  // never one more: a final decision stays final.
  const nextAttemptAt =
    decision.nextAttemptAt === null
      ? null
      : heededRetryAt(decision.nextAttemptAt, result, rules.schedule, receiver);
  const verdict = decideEndpoint(state.endpoint.consecutiveFailures, decision, rules.policy);
  // Only the attempt that raises the count disables: one that keeps or resets it never does.
  const raised = verdict.consecutiveFailures > state.endpoint.consecutiveFailures;
  const gone = !result.succeeded && isGoneAnswer(result.statusCode, receiver);
  const disable = state.endpoint.enabled && (gone || (verdict.disable && raised));
  const enabledAfter = state.endpoint.enabled && !disable;
  return {
    delivery: {
      status:
        decision.status === 'awaiting_retry' && (!enabledAfter || state.endpoint.paused === true)
          ? 'held'
          : decision.status,
      attempts: decision.attempts,
      nextAttemptAt,
      final: decision.final,
    },
    endpoint: {
      consecutiveFailures: verdict.consecutiveFailures,
      disable,
      disabledReason: disable ? (gone ? 'gone' : 'consecutive_failures') : null,
    },
    notice: noticeAfterAttempt(
      state.endpoint,
      { consecutiveFailures: verdict.consecutiveFailures, disable },
      rules.notices,
    ),
  };
}

/**
 * Whether an attempt can raise its endpoint's failure count, or answered `410` under the gone
 * policy, and so disable it. Every other attempt leaves the count as it is or resets it, so a
 * store may record it without reading the endpoint (PostgreSQL's batched record, design C5).
 */
export function mayDisable(
  attemptsBefore: number,
  succeeded: boolean,
  rules: TransitionRules,
  statusCode?: number | null,
): boolean {
  if (succeeded) return false;
  if (isGoneAnswer(statusCode, rules.receiver ?? DEFAULT_RECEIVER_POLICY)) return true;
  if (rules.policy.countPer === 'attempt') return true;
  return decideAfterAttempt(attemptsBefore, { ok: false }, 0, rules.schedule).final === 'failed';
}
