/**
 * One attempt of one claimed delivery: sign the stored bytes, send, decide, record. The decisions
 * are the pure functions of src/domain; this file only moves bytes and calls them.
 */
import { sign } from '@linkhooks/protocol';
import type { Clock } from '../clock.js';
import type { DeliveryClient } from '../delivery/http-client.js';
import { decideAfterAttempt } from '../domain/delivery-state.js';
import type { DisablePolicy } from '../domain/disable-rule.js';
import type { RetrySchedule } from '../domain/schedule.js';
import type { AttemptApplied, SenderStore } from '../store/port.js';
import type { AttemptRecord, ClaimedDelivery } from '../store/records.js';

export interface AttemptDeps {
  store: SenderStore;
  client: DeliveryClient;
  clock: Clock;
  schedule: RetrySchedule;
  policy: DisablePolicy;
  userAgent: string;
}

export interface AttemptReport {
  claim: ClaimedDelivery;
  attempt: AttemptRecord;
  applied: AttemptApplied;
}

/** The request headers of SPEC 4.1 plus DESIGN's extension headers. */
export function deliveryHeaders(claim: ClaimedDelivery, attemptNumber: number, userAgent: string) {
  return {
    'content-type': 'application/json',
    // SPEC 5: HMAC-SHA256 of the stored bytes; the same bytes give the same signature on every attempt.
    'x-service-signature': sign(claim.body, claim.secret),
    'x-service-event-id': claim.delivery.eventId,
    'x-service-delivery-id': claim.delivery.id,
    'x-service-attempt': String(attemptNumber),
    'user-agent': userAgent,
  };
}

/** `onSent`: told when the request is over and only the record remains (the slot is free). */
export async function runAttempt(
  deps: AttemptDeps,
  claim: ClaimedDelivery,
  onSent?: () => void,
): Promise<AttemptReport> {
  const number = claim.delivery.attempts + 1;
  const headers = deliveryHeaders(claim, number, deps.userAgent);
  const startedAt = deps.clock.now();
  const result = await deps.client.send({ url: claim.url, body: claim.body, headers });
  onSent?.();
  // SPEC 8: the next delay is measured from the failure of this attempt.
  const finishedAt = deps.clock.now();
  const decision = decideAfterAttempt(claim.delivery.attempts, result.outcome, finishedAt, deps.schedule);
  const attempt: AttemptRecord = {
    deliveryId: claim.delivery.id,
    number,
    startedAt,
    durationMs: result.durationMs,
    statusCode: result.outcome.ok ? result.outcome.statusCode : (result.outcome.statusCode ?? null),
    failureKind: result.outcome.ok ? null : result.outcome.kind,
    errorMessage: result.outcome.ok ? null : result.outcome.message,
    responseSnippet: result.responseSnippet,
    nextAttemptAt: decision.nextAttemptAt,
    requestHeaders: headers,
  };
  const applied = await deps.store.recordAttempt({
    claim: { deliveryId: claim.delivery.id, leaseToken: claim.leaseToken },
    attempt,
    decision,
    policy: deps.policy,
    now: finishedAt,
  });
  return { claim, attempt, applied };
}
