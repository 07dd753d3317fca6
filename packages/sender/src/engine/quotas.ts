/**
 * What one account may use (design D26): endpoints it may have, events per second it may publish
 * (with a burst for spikes), test sends, manual retries and recoveries per minute. Each refusal is a
 * `rate_limited` or `quota_exceeded` error carrying when to try again; nothing is half-done.
 * Counted in this process: with several service processes, each counts its own.
 */
import type { Clock } from '../clock.js';
import { SenderError } from '../errors.js';
import { createLimiter } from '../limits/limiter.js';
import { rateLimited } from '../limits/rate-limited.js';
import { perMinute } from '../limits/token-bucket.js';

export interface Quotas {
  /** Endpoints one account may have. Default 100. */
  endpointsPerAccount: number;
  /** Events one account may publish per second, sustained. Default 1,000. */
  eventsPerSecond: number;
  /** Events one account may publish at once after a quiet spell. Default 60,000 (a minute's worth). */
  eventsBurst: number;
  /** Test events one account may send per minute. Default 60. */
  testSendsPerMinute: number;
  /** Deliveries one account may retry by hand per minute. Default 120. */
  retriesPerMinute: number;
  /** Recovery calls one account may make per minute, each of up to 1,000 deliveries. Default 10. */
  recoveriesPerMinute: number;
}

export const DEFAULT_QUOTAS: Quotas = {
  endpointsPerAccount: 100,
  eventsPerSecond: 1_000,
  eventsBurst: 60_000,
  testSendsPerMinute: 60,
  retriesPerMinute: 120,
  recoveriesPerMinute: 10,
};

export function checkQuotas(input: Partial<Quotas> | undefined): Quotas {
  const quotas = { ...DEFAULT_QUOTAS, ...input };
  for (const [name, value] of Object.entries(quotas)) {
    if (!Number.isInteger(value) || value < 1) {
      throw new SenderError(
        'invalid_option',
        `quotas.${name} must be a whole number above 0, got ${String(value)}`,
      );
    }
  }
  return quotas;
}

export function createQuotaGuard(quotas: Quotas, clock: Clock) {
  const events = createLimiter({ perSecond: quotas.eventsPerSecond, burst: quotas.eventsBurst }, clock);
  const testSends = createLimiter(perMinute(quotas.testSendsPerMinute), clock);
  const retries = createLimiter(perMinute(quotas.retriesPerMinute), clock);
  const recoveries = createLimiter(perMinute(quotas.recoveriesPerMinute), clock);
  const takeOrThrow = (limiter: typeof events, accountId: string, what: string) => {
    const taken = limiter.take(accountId);
    if (!taken.ok) throw rateLimited(what, taken.retryAfterMs);
  };
  return {
    /** One event of `accountId`; `refund` when it was not stored after all (an invalid event). */
    event: (accountId: string) => takeOrThrow(events, accountId, 'events for this account'),
    refundEvent: (accountId: string) => events.refund(accountId),
    testSend: (accountId: string) => takeOrThrow(testSends, accountId, 'test events'),
    retry: (accountId: string) => takeOrThrow(retries, accountId, 'manual retries'),
    recovery: (accountId: string) => takeOrThrow(recoveries, accountId, 'recoveries'),
    /** Before creating an endpoint, given how many the account has. */
    endpoint(existing: number) {
      if (existing < quotas.endpointsPerAccount) return;
      throw new SenderError(
        'quota_exceeded',
        `this account has ${existing} endpoints, the most it may have; delete one to add another`,
        // Waiting does not free one; an hour is as good an answer as any to a client that waits.
        { retryAfterSeconds: 3600 },
      );
    },
  };
}
