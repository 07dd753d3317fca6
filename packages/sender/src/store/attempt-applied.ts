/** What a store answers for an attempt it recorded: one shape for both stores (port.ts AttemptApplied). */
import type { Transition } from '../domain/transition.js';
import type { AttemptApplied } from './port.js';
import type { EndpointRecord } from './records.js';

/**
 * `t` is decideTransition's result as written, `failuresBefore` the endpoint's count it started
 * from; the count is reported only when this attempt raised it.
 */
export function attemptApplied(
  t: Transition,
  failuresBefore: number,
  disabledEndpoint: EndpointRecord | undefined,
  noticed: boolean,
): AttemptApplied {
  return {
    applied: true,
    status: t.delivery.status,
    nextAttemptAt: t.delivery.nextAttemptAt,
    ...(disabledEndpoint ? { disabledEndpoint } : {}),
    ...(t.endpoint.consecutiveFailures > failuresBefore
      ? { endpointFailures: t.endpoint.consecutiveFailures }
      : {}),
    ...(noticed ? { noticed: true } : {}),
  };
}
