/** What the engine does with each recorded attempt: metrics, a log line, and the disable hook. */
import type { Logger } from 'pino';
import type { SenderMetrics } from '../metrics.js';
import type { EndpointRecord } from '../store/records.js';
import type { AttemptReport } from '../worker/attempt.js';
import type { BreakerChange } from '../worker/breakers.js';

export interface Observers {
  metrics: SenderMetrics;
  logger: Logger;
  onEndpointDisabled?: ((endpoint: EndpointRecord) => void | Promise<void>) | undefined;
  onAttempt?: ((report: AttemptReport) => void) | undefined;
}

/**
 * Runs one of the platform's hooks: what it throws, or the promise it returns rejects with, is
 * logged, never the worker's failure (an attempt's promise that rejected ended the process).
 */
export function runHook(logger: Logger, name: string, hook: () => unknown): void {
  try {
    const returned = hook();
    if (typeof (returned as PromiseLike<unknown> | undefined)?.then === 'function')
      Promise.resolve(returned).catch((error: unknown) => hookFailed(logger, name, error));
  } catch (error) {
    hookFailed(logger, name, error);
  }
}
const hookFailed = (logger: Logger, name: string, error: unknown) =>
  logger.error({ err: error }, `${name} hook failed`);

export function observeAttempts({ metrics, logger, onEndpointDisabled, onAttempt }: Observers) {
  return (report: AttemptReport): void => {
    const { claim } = report;
    if (report.unsent) {
      // No attempt: the delivery is due again as it was, and its receiver was not asked.
      metrics.unsent.inc();
      logger.info(
        {
          delivery: claim.delivery.id,
          endpoint: claim.delivery.endpointId,
          origin: claim.origin,
          ms: report.heldMs,
        },
        'attempt not sent: every connection to its server was held by earlier requests until its deadline',
      );
      onAttempt?.(report);
      return;
    }
    const { attempt, applied, refused } = report;
    const outcome = attempt.failureKind ? 'failure' : 'success';
    // The operator's figures keep the time the request held its slot, which the customer's record
    // may leave out.
    const ms = report.heldMs;
    metrics.attempts.inc({ outcome, kind: attempt.failureKind ?? 'none' });
    metrics.duration.observe({ outcome }, ms / 1000);
    if (applied.status === 'delivered' || applied.status === 'failed')
      metrics.deliveries.inc({ outcome: applied.status });
    logger.info(
      {
        delivery: claim.delivery.id,
        endpoint: claim.delivery.endpointId,
        attempt: attempt.number,
        status: attempt.statusCode,
        kind: attempt.failureKind,
        ms,
        applied: applied.applied,
        next: applied.status,
        // The operator's log only: the customer's reads that the name gives no public address.
        ...(refused === undefined ? {} : { refused }),
      },
      'attempt',
    );
    if (applied.disabledEndpoint) {
      const endpoint = applied.disabledEndpoint;
      logger.warn(
        {
          endpoint: endpoint.id,
          account: endpoint.accountId,
          failures: endpoint.consecutiveFailures,
          reason: endpoint.disabledReason,
        },
        endpoint.disabledReason === 'gone'
          ? 'endpoint disabled: its receiver answered 410 Gone'
          : 'endpoint disabled after consecutive failed deliveries',
      );
      runHook(logger, 'onEndpointDisabled', () => onEndpointDisabled?.(endpoint));
    }
    onAttempt?.(report);
  };
}

/**
 * What the engine does with a breaker that opened or closed (design D27): a log line naming the
 * endpoint or origin and its account, and a count of trips. Nothing else says an endpoint is being
 * backed off: its deliveries wait as pending, unattempted.
 */
export function observeBreakers({ metrics, logger }: Pick<Observers, 'metrics' | 'logger'>) {
  return ({ kind, key, accountId, change, trips, coolDownMs }: BreakerChange): void => {
    const fields = { [kind]: key, account: accountId, trips };
    if (change === 'opened') {
      metrics.breakerTrips.inc({ kind });
      logger.warn({ ...fields, coolDownMs }, 'circuit breaker opened');
    } else logger.info(fields, 'circuit breaker closed');
  };
}
