/**
 * One worker's circuit breakers (design D27), by endpoint and by origin, fed by its own attempts:
 * the caps they set are what the worker's claims pass as `shares.capped`, and the endpoints
 * half-open are probed apart (claimProbes), each with its earliest due retry first.
 */
import type { Clock } from '../clock.js';
import {
  afterAttempt,
  type BreakerState,
  capOf,
  ENDPOINT_THRESHOLD,
  isHalfOpen,
  ORIGIN_THRESHOLD,
} from '../domain/breaker.js';
import type { ClaimShares } from '../store/port.js';
import type { AttemptReport } from './attempt.js';

/**
 * A probe that found nothing due is not asked for again sooner: a half-open endpoint with nothing
 * due would otherwise cost a query at every claim, and its next delivery waits at most this long.
 */
export const PROBE_MISS_MS = 1_000;

interface EndpointBreaker {
  state: BreakerState;
  accountId: string;
  origin: string;
}

/** What one claim passes the store: the caps, and the half-open endpoints it may probe. */
export interface BreakerCaps {
  capped: NonNullable<ClaimShares['capped']>;
  /** Half-open endpoints, each with its account and origin; left out of the claim (cap 0). */
  probing: { endpointId: string; accountId: string; origin: string }[];
}

export function createBreakers(clock: Clock) {
  const endpoints = new Map<string, EndpointBreaker>();
  const origins = new Map<string, BreakerState>();
  const missedAt = new Map<string, number>();
  const next = (
    state: BreakerState | null,
    { failureKind, durationMs }: AttemptReport['attempt'],
    threshold: number,
  ) => afterAttempt(state, failureKind, durationMs, clock.now(), threshold);
  return {
    observe(report: AttemptReport) {
      const { endpointId, accountId } = report.claim.delivery;
      const { origin } = report.claim;
      const endpoint = next(endpoints.get(endpointId)?.state ?? null, report.attempt, ENDPOINT_THRESHOLD);
      if (endpoint) endpoints.set(endpointId, { state: endpoint, accountId, origin });
      else endpoints.delete(endpointId); // closed: nothing to keep
      const byOrigin = next(origins.get(origin) ?? null, report.attempt, ORIGIN_THRESHOLD);
      if (byOrigin) origins.set(origin, byOrigin);
      else origins.delete(origin);
      missedAt.delete(endpointId);
    },
    caps(perEndpoint: number, perOrigin: number): BreakerCaps {
      const now = clock.now();
      const capped = { endpoints: new Map<string, number>(), origins: new Map<string, number>() };
      const probing: BreakerCaps['probing'] = [];
      for (const [endpointId, { state, accountId, origin }] of endpoints) {
        const cap = capOf(state, now, perEndpoint);
        if (cap >= perEndpoint) continue;
        if (isHalfOpen(state, now) && cap > 0) {
          capped.endpoints.set(endpointId, 0);
          if (now - (missedAt.get(endpointId) ?? Number.NEGATIVE_INFINITY) >= PROBE_MISS_MS)
            probing.push({ endpointId, accountId, origin });
        } else capped.endpoints.set(endpointId, cap);
      }
      for (const [origin, state] of origins) {
        const cap = capOf(state, now, perOrigin);
        if (cap < perOrigin) capped.origins.set(origin, cap);
      }
      return { capped, probing };
    },
    /** Probes asked for that found nothing due (PROBE_MISS_MS). */
    missed(endpointIds: Iterable<string>) {
      const now = clock.now();
      for (const id of endpointIds) missedAt.set(id, now);
    },
  };
}

/**
 * Which of the half-open endpoints a claim of `limit` probes: those with no attempt of this worker
 * still out (`busy`), within their origin's cap and their account's and origin's shares (design
 * D25), counting the probes chosen before. Pure; the store leases only those with something due
 * and no delivery in flight.
 */
export function chooseProbes(
  { capped, probing }: BreakerCaps,
  shares: Pick<ClaimShares, 'perAccount' | 'perOrigin' | 'openByAccount' | 'openByOrigin'>,
  busy: ReadonlySet<string>,
  limit: number,
): string[] {
  const byAccount = new Map(shares.openByAccount);
  const byOrigin = new Map(shares.openByOrigin);
  const chosen: string[] = [];
  for (const { endpointId, accountId, origin } of probing) {
    if (chosen.length >= limit) break;
    const account = byAccount.get(accountId) ?? 0;
    const host = byOrigin.get(origin) ?? 0;
    const originCap = Math.min(capped.origins.get(origin) ?? shares.perOrigin, shares.perOrigin);
    if (busy.has(endpointId) || account >= shares.perAccount || host >= originCap) continue;
    byAccount.set(accountId, account + 1);
    byOrigin.set(origin, host + 1);
    chosen.push(endpointId);
  }
  return chosen;
}
