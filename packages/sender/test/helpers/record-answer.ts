/**
 * A claimed delivery's attempt recorded as a worker records it: the receiver answered `statusCode`
 * at `now` (2xx a success, anything else a failure of kind `http_status`), under the default
 * schedule and disabling policy unless `rules` says otherwise.
 */
import { DEFAULT_DISABLE_POLICY } from '../../src/domain/disable-rule.js';
import { DEFAULT_SCHEDULE } from '../../src/domain/schedule.js';
import type { TransitionRules } from '../../src/domain/transition.js';
import type { AttemptResult, SenderStore } from '../../src/store/port.js';
import type { AttemptRecord, ClaimedDelivery } from '../../src/store/records.js';

/** The default schedule and disabling policy. */
export const DEFAULT_RULES: TransitionRules = { schedule: DEFAULT_SCHEDULE, policy: DEFAULT_DISABLE_POLICY };

export interface AnswerOptions
  extends Partial<
    Pick<AttemptRecord, 'number' | 'startedAt' | 'durationMs' | 'responseSnippet' | 'requestHeaders'>
  > {
  rules?: TransitionRules;
  /** The answer's Retry-After header, if it had one. */
  retryAfter?: string | null;
}

/**
 * @example
 * await recordAnswer(store, claimed, 503, now, { retryAfter: '120' });
 */
export function recordAnswer(
  store: SenderStore,
  c: ClaimedDelivery,
  statusCode: number,
  now: number,
  options: AnswerOptions = {},
) {
  return store.recordAttempt(answerResult(c, statusCode, now, options));
}

/** What recordAnswer records: the attempt's result, for a statement's parameters. */
export function answerResult(
  c: ClaimedDelivery,
  statusCode: number,
  now: number,
  {
    rules = DEFAULT_RULES,
    retryAfter = null,
    number = c.delivery.attempts + 1,
    startedAt = now,
    durationMs = 5,
    responseSnippet = null,
    requestHeaders = {},
  }: AnswerOptions = {},
): AttemptResult {
  const ok = statusCode >= 200 && statusCode < 300;
  return {
    lease: { deliveryId: c.delivery.id, leaseToken: c.leaseToken },
    attempt: {
      deliveryId: c.delivery.id,
      number,
      startedAt,
      durationMs,
      statusCode,
      failureKind: ok ? null : 'http_status',
      errorMessage: ok ? null : `receiver answered ${statusCode}`,
      responseSnippet,
      requestHeaders,
    },
    rules,
    now,
    retryAfter,
  };
}
