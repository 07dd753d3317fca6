/**
 * One worker's circuit breakers (design D27), by endpoint and by origin, fed by its own attempts:
 * the caps they set are what the worker's claims pass as `shares.capped`.
 */
import type { Clock } from '../clock.js';
import {
  afterAttempt,
  type BreakerState,
  capOf,
  ENDPOINT_THRESHOLD,
  ORIGIN_THRESHOLD,
} from '../domain/breaker.js';
import type { AttemptReport } from './attempt.js';

export function createBreakers(clock: Clock) {
  const endpoints = new Map<string, BreakerState>();
  const origins = new Map<string, BreakerState>();
  const step = (
    map: Map<string, BreakerState>,
    key: string,
    { failureKind, durationMs }: AttemptReport['attempt'],
    threshold: number,
  ) => {
    const next = afterAttempt(map.get(key) ?? null, failureKind, durationMs, clock.now(), threshold);
    if (next) map.set(key, next);
    else map.delete(key); // closed: nothing to keep
  };
  const capped = (map: Map<string, BreakerState>, normal: number) => {
    const now = clock.now();
    const caps = new Map<string, number>();
    for (const [key, state] of map) {
      const cap = capOf(state, now, normal);
      if (cap < normal) caps.set(key, cap);
    }
    return caps;
  };
  return {
    observe(report: AttemptReport) {
      step(endpoints, report.claim.delivery.endpointId, report.attempt, ENDPOINT_THRESHOLD);
      step(origins, report.claim.origin, report.attempt, ORIGIN_THRESHOLD);
    },
    caps(perEndpoint: number, perOrigin: number) {
      return { endpoints: capped(endpoints, perEndpoint), origins: capped(origins, perOrigin) };
    },
  };
}
