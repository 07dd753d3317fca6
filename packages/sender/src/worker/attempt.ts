/**
 * One attempt of one claimed delivery: sign the stored bytes, send, record. What the outcome
 * means is decideTransition's (src/domain), applied by the store as it records; this file only
 * moves bytes.
 */
import type { Clock } from '../clock.js';
import type { AbandonSignal } from '../delivery/abandon.js';
import type { DeliveryClient } from '../delivery/http-client.js';
import { signatureHeaders } from '../delivery/signature-headers.js';
import { signingSecrets } from '../domain/secret-rotation.js';
import type { TransitionRules } from '../domain/transition.js';
import type { AttemptApplied, DeliveryQueue } from '../store/port.js';
import type { AttemptRecord, ClaimedDelivery } from '../store/records.js';
import { atOnce, LARGE_BODY_BYTES, type TurnBudget } from '../turn-budget.js';

export interface AttemptDeps {
  queue: DeliveryQueue;
  client: DeliveryClient;
  clock: Clock;
  rules: TransitionRules;
  userAgent: string;
  /** Where a large body's start waits for the loop (turn-budget.ts's startBudgetFor); at once unless given. */
  turnBudget?: TurnBudget;
}

/** A request that went out (or was cut short by the worker), and its attempt, recorded or not. */
export interface AttemptMade {
  claim: ClaimedDelivery;
  attempt: AttemptRecord;
  /** `applied: false` when the attempt was not recorded: the lease was lost or abandoned. */
  applied: AttemptApplied;
  /** For the operator's log: why the address was refused (AttemptOutcome's `refused`). */
  refused?: string;
  unsent?: undefined;
  /**
   * How long the request held its slot, which the attempt may record as less (a name without a
   * public address records none): what the breakers and the operator's figures read.
   */
  heldMs: number;
}

/**
 * A request given back unsent (SendResult's `unsent`): it waited behind its origin's earlier
 * requests for a connection until its deadline, so nothing was written and there is no attempt;
 * the delivery was given back, due as it was, and its receiver was not asked.
 */
export interface AttemptUnsent {
  claim: ClaimedDelivery;
  unsent: true;
  /** How long the request held its slot before it was given back. */
  heldMs: number;
}

/**
 * What became of a claimed delivery's request: an attempt (`AttemptMade`), or a request given back
 * unsent (`AttemptUnsent`), which has none to read; `unsent` tells them apart.
 */
export type AttemptReport = AttemptMade | AttemptUnsent;

/**
 * The request headers of design R4 and R9, the extension headers of design D6 and D42, and, for
 * an endpoint that asks, the Standard Webhooks headers of design D32. `now` is the attempt's time:
 * it picks the secrets (design D38, D39) and is the signed `webhook-timestamp`.
 */
export function deliveryHeaders(
  claim: ClaimedDelivery,
  attemptNumber: number,
  userAgent: string,
  now: number,
): Record<string, string> {
  const secrets = signingSecrets(claim, now);
  // design R9: HMAC-SHA256 of the stored bytes; the same bytes and secret give the same signature
  // on every attempt. During a rotation's grace the secret is the previous one (design D39). The
  // Standard Webhooks id is the event's, the same on every attempt.
  const standard =
    claim.standardWebhooks && secrets.standard.length > 0
      ? { id: claim.delivery.eventId, secrets: secrets.standard, now }
      : null;
  // Set on signatureHeaders' object (this attempt's own), in this order, not spread into a new one
  // (design D69).
  const headers = signatureHeaders(claim.body, secrets.serviceSignature, standard);
  headers['x-service-event-id'] = claim.delivery.eventId;
  headers['x-service-delivery-id'] = claim.delivery.id;
  headers['x-service-attempt'] = String(attemptNumber);
  headers['user-agent'] = userAgent;
  if (claim.delivery.test) headers['x-service-test'] = '1';
  return headers;
}

/**
 * `onSent`: told when the request is over and only the record remains.
 * `abandon`: aborted when the worker lost the lease (design I3): the request is cut short and
 * nothing is recorded, since another worker may hold the delivery now.
 */
export async function runAttempt(
  deps: AttemptDeps,
  claim: ClaimedDelivery,
  onSent?: () => void,
  abandon?: AbandonSignal,
): Promise<AttemptReport> {
  const number = claim.delivery.attempts + 1;
  // The attempt starts when its request does: its time is the signed one and the one recorded.
  const start = () => {
    const startedAt = deps.clock.now();
    const headers = deliveryHeaders(claim, number, deps.userAgent, startedAt);
    const sent = deps.client.send({
      url: claim.url,
      body: claim.body,
      headers,
      account: claim.delivery.accountId,
      ...(abandon ? { signal: abandon } : {}),
    });
    return { startedAt, headers, sent };
  };
  // A large body is signed and handed to the client in the turn's budget where the requests are sent
  // from this thread (design D76): the client writes it at once when a connection is free, and a
  // claim's deliveries of such bodies otherwise all started, each encrypted and written, in the turn
  // the claim came back.
  const { startedAt, headers, sent } =
    claim.body.byteLength > LARGE_BODY_BYTES ? await (deps.turnBudget ?? atOnce)(start) : start();
  const result = await sent;
  onSent?.();
  if (result.unsent) {
    // Not the receiver's failure: no attempt is counted against it (design D24). A lease the worker
    // abandoned is no longer its own to give back.
    if (!abandon?.aborted) await deps.queue.releaseLease(claim.delivery.id, claim.leaseToken);
    return { claim, unsent: true, heldMs: result.durationMs };
  }
  // A name without a public address: its attempt records no time (AttemptOutcome's noPublicAddress).
  const untimed = !result.outcome.ok && result.outcome.noPublicAddress === true;
  // design R12: the next delay is measured from the failure of this attempt.
  const finishedAt = untimed ? startedAt : deps.clock.now();
  const attempt: AttemptRecord = {
    deliveryId: claim.delivery.id,
    number,
    startedAt,
    durationMs: untimed ? 0 : result.durationMs,
    statusCode: result.outcome.ok ? result.outcome.statusCode : (result.outcome.statusCode ?? null),
    failureKind: result.outcome.ok ? null : result.outcome.kind,
    errorMessage: result.outcome.ok ? null : result.outcome.message,
    responseSnippet: result.responseSnippet,
    nextAttemptAt: null,
    requestHeaders: headers,
  };
  const report = (recorded: AttemptRecord, applied: AttemptApplied): AttemptMade => {
    const made: AttemptMade = { claim, attempt: recorded, applied, heldMs: result.durationMs };
    if (!result.outcome.ok && result.outcome.refused !== undefined) made.refused = result.outcome.refused;
    return made;
  };
  if (abandon?.aborted) return report(attempt, { applied: false });
  const applied = await deps.queue.recordAttempt({
    lease: { deliveryId: claim.delivery.id, leaseToken: claim.leaseToken },
    attempt,
    rules: deps.rules,
    now: finishedAt,
    retryAfter: result.retryAfter ?? null,
  });
  return report({ ...attempt, nextAttemptAt: applied.nextAttemptAt ?? null }, applied);
}
