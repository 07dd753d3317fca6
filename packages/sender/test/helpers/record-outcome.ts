/**
 * A claimed delivery's attempt recorded as a worker records it: answered 200, or 500 (failure kind
 * `http_status`), at `now`, under `rules`.
 */
import { DEFAULT_DISABLE_POLICY } from '../../src/domain/disable-rule.js';
import { DEFAULT_SCHEDULE } from '../../src/domain/schedule.js';
import type { TransitionRules } from '../../src/domain/transition.js';
import type { SenderStore } from '../../src/store/port.js';
import type { ClaimedDelivery } from '../../src/store/records.js';

/** The default schedule and disabling policy. */
export const DEFAULT_RULES: TransitionRules = { schedule: DEFAULT_SCHEDULE, policy: DEFAULT_DISABLE_POLICY };

export const recordOutcome = (
  store: SenderStore,
  c: ClaimedDelivery,
  ok: boolean,
  now: number,
  rules: TransitionRules = DEFAULT_RULES,
) =>
  store.recordAttempt({
    lease: { deliveryId: c.delivery.id, leaseToken: c.leaseToken },
    attempt: {
      deliveryId: c.delivery.id,
      number: c.delivery.attempts + 1,
      startedAt: now,
      durationMs: 5,
      statusCode: ok ? 200 : 500,
      failureKind: ok ? null : 'http_status',
      errorMessage: ok ? null : 'receiver answered 500',
      responseSnippet: null,
      requestHeaders: {},
    },
    rules,
    now,
  });
