/**
 * One worker's circuit breakers (design D27), by endpoint and by account at an origin, fed by its
 * own attempts: the caps they set are what the worker's claims pass as `shares.capped`, and the
 * endpoints half-open are probed apart (claimProbes), each with its earliest due retry first.
 */
import type { Clock } from '../clock.js';
import {
  afterAttempt,
  type BreakerState,
  capOf,
  ENDPOINT_THRESHOLD,
  endpointCapOf,
  heldUnanswered,
  isHalfOpen,
  MAX_COOL_DOWN_MS,
  ORIGIN_THRESHOLD,
} from '../domain/breaker.js';
import { accountAtOrigin, pickDue, shareLimits } from '../store/pick-due.js';
import type { ClaimShares } from '../store/port.js';
import type { ClaimedDelivery } from '../store/records.js';
import type { AttemptMade } from './attempt.js';

/**
 * A probe that found nothing due is asked for again this long after, doubling with each miss in a
 * row up to the longest cool-down: a half-open endpoint with nothing due (quiet, disabled, paused or
 * deleted) would otherwise cost a store call at every claim. A delivery of its that falls due
 * meanwhile waits as long (and for the worker's next claim), as it would behind an open breaker.
 */
export const PROBE_MISS_MS = 1_000;

/**
 * A breaker with no attempt for this long is forgotten: its endpoint may be deleted, disabled or
 * quiet. Kept, the entries of every endpoint ever unanswered grew without end (an account that
 * makes endpoints at a server that hangs, then deletes them, at its API requests' pace), each read
 * at every claim and its cap sent to the store with it. One that has not opened is forgotten after
 * twice the longest cool-down: forgotten, its endpoint starts again closed, and its first
 * unanswered attempt caps it at one request again (endpointCapOf). One that opened is kept a day,
 * longer than the default schedule's longest wait between a delivery's attempts (8 h; a longer
 * schedule, or one scaled up, may outlast it): a hanging endpoint whose only deliveries are
 * retries hours apart keeps its trips and cool-down.
 */
export const FORGET_AFTER_MS = 2 * MAX_COOL_DOWN_MS;
export const FORGET_OPENED_AFTER_MS = 24 * 60 * 60_000;
/**
 * The breakers a worker keeps of each kind, at most; past it, the one seen longest ago goes. An
 * account that opened a breaker at each endpoint it made and deleted (three unanswered attempts
 * each, within its shares) kept each a day, every one read at each claim; so many endpoints
 * unanswered at once are rarely all one platform's own, and one forgotten starts closed again.
 */
export const MOST_BREAKERS = 4_096;

/** When a probe that missed `misses` times in a row is asked for again, missing at `at`. */
const nextProbeAt = (at: number, misses: number) =>
  at + Math.min(PROBE_MISS_MS * 2 ** (misses - 1), MAX_COOL_DOWN_MS);

/** A breaker's state, the account and origin of its endpoint or endpoints, and its last attempt's end. */
interface KeyedBreaker {
  state: BreakerState;
  accountId: string;
  origin: string;
  seenAt: number;
}

/** Whether a breaker last seen at `seenAt` is forgotten at `now`. */
const forgotten = ({ state, seenAt }: KeyedBreaker, now: number) =>
  now - seenAt > (state.trips > 0 ? FORGET_OPENED_AFTER_MS : FORGET_AFTER_MS);

/**
 * A breaker that opened (a first trip, or a failed probe: `coolDownMs` until it is half-open) or
 * closed (an answer), for the operator's log and metrics.
 */
export interface BreakerChange {
  /** An endpoint's, or an account's at an origin (`origin`, its endpoints there together). */
  kind: 'endpoint' | 'origin';
  /** The endpoint's id, or the origin. */
  key: string;
  accountId: string;
  change: 'opened' | 'closed';
  trips: number;
  coolDownMs: number;
}

/** `key`'s change from `before` to `after` at `now`, if it opened or closed. */
function changeOf(
  kind: BreakerChange['kind'],
  key: string,
  accountId: string,
  before: BreakerState | null,
  after: BreakerState | null,
  now: number,
): BreakerChange | null {
  const tripsBefore = before?.trips ?? 0;
  if (after && after.trips > tripsBefore) {
    return { kind, key, accountId, change: 'opened', trips: after.trips, coolDownMs: after.openUntil - now };
  }
  if (!after && tripsBefore > 0)
    return { kind, key, accountId, change: 'closed', trips: tripsBefore, coolDownMs: 0 };
  return null;
}

/** What one claim passes the store: the caps, and the half-open endpoints it may probe. */
export interface BreakerCaps {
  capped: NonNullable<ClaimShares['capped']>;
  /** Half-open endpoints, each with its account and origin; left out of the claim (cap 0). */
  probing: { endpointId: string; accountId: string; origin: string }[];
}

/** `key`'s breaker set to `state` at `seenAt`, or forgotten when closed (nothing to keep). */
function set(
  breakers: Map<string, KeyedBreaker>,
  key: string,
  state: BreakerState | null,
  accountId: string,
  origin: string,
  seenAt: number,
) {
  // Deleted first, so the map runs from the breaker seen longest ago to the one seen last.
  breakers.delete(key);
  if (!state) return;
  breakers.set(key, { state, accountId, origin, seenAt });
  if (breakers.size > MOST_BREAKERS) breakers.delete(breakers.keys().next().value as string);
}

export function createBreakers(clock: Clock) {
  const endpoints = new Map<string, KeyedBreaker>();
  /** Keyed by accountAtOrigin. */
  const atOrigins = new Map<string, KeyedBreaker>();
  const missed = new Map<string, { misses: number; askAt: number }>();
  return {
    /**
     * Takes the attempt into its endpoint's breaker and its account's at its origin; tells
     * `onChange` of each that opened or closed.
     */
    observe(report: AttemptMade, onChange?: (change: BreakerChange) => void) {
      const { endpointId, accountId } = report.claim.delivery;
      const { origin } = report.claim;
      const now = clock.now();
      const before = endpoints.get(endpointId)?.state ?? null;
      // The time the request held its slot, which the attempt's record may leave out (heldMs).
      const { failureKind } = report.attempt;
      const durationMs = report.heldMs;
      const endpoint = afterAttempt(before, failureKind, durationMs, now, ENDPOINT_THRESHOLD);
      set(endpoints, endpointId, endpoint, accountId, origin, now);
      const pair = accountAtOrigin(accountId, origin);
      const originBefore = atOrigins.get(pair)?.state ?? null;
      // An endpoint its own breaker already backs off says nothing new of its origin: its requests
      // out when it opened tripped the origin's too (two warnings for one receiver). Answers count.
      const contained = before !== null && before.trips > 0 && heldUnanswered(failureKind, durationMs);
      const byOrigin = contained
        ? originBefore
        : afterAttempt(originBefore, failureKind, durationMs, now, ORIGIN_THRESHOLD);
      set(atOrigins, pair, byOrigin, accountId, origin, now);
      missed.delete(endpointId);
      if (!onChange) return;
      const ofEndpoint = changeOf('endpoint', endpointId, accountId, before, endpoint, now);
      if (ofEndpoint) onChange(ofEndpoint);
      const ofOrigin = changeOf('origin', origin, accountId, originBefore, byOrigin, now);
      if (ofOrigin) onChange(ofOrigin);
    },
    caps(perEndpoint: number, perAccountAtOrigin: number): BreakerCaps {
      const now = clock.now();
      const capped = { endpoints: new Map<string, number>(), accountsAtOrigins: new Map<string, number>() };
      const probing: BreakerCaps['probing'] = [];
      for (const [endpointId, breaker] of endpoints) {
        const { state, accountId, origin } = breaker;
        if (forgotten(breaker, now)) {
          endpoints.delete(endpointId);
          missed.delete(endpointId);
          continue;
        }
        // Half-open first: with a cap of 1, its probe's cap is the endpoint's own.
        if (isHalfOpen(state, now)) {
          capped.endpoints.set(endpointId, 0);
          if (now >= (missed.get(endpointId)?.askAt ?? now)) probing.push({ endpointId, accountId, origin });
          continue;
        }
        const cap = endpointCapOf(state, now, perEndpoint);
        if (cap < perEndpoint) capped.endpoints.set(endpointId, cap);
      }
      // The misses of breakers let go past MOST_BREAKERS go with them.
      if (missed.size > endpoints.size)
        for (const id of missed.keys()) if (!endpoints.has(id)) missed.delete(id);
      for (const [pair, breaker] of atOrigins) {
        const { state } = breaker;
        if (forgotten(breaker, now)) {
          atOrigins.delete(pair);
          continue;
        }
        const cap = capOf(state, now, perAccountAtOrigin);
        if (cap < perAccountAtOrigin) capped.accountsAtOrigins.set(pair, cap);
      }
      return { capped, probing };
    },
    /** Probes asked for that found nothing due (PROBE_MISS_MS). */
    missed(endpointIds: Iterable<string>) {
      const now = clock.now();
      for (const id of endpointIds) {
        const misses = (missed.get(id)?.misses ?? 0) + 1;
        missed.set(id, { misses, askAt: nextProbeAt(now, misses) });
      }
    },
  };
}

/**
 * Which of the half-open endpoints (`probing`) a claim of `limit` probes: those with no attempt of
 * this worker still out (`busy`), within their account's, origin's and account's at the origin
 * shares (design D25) and the caps in their place, counting the probes chosen before. Pure; the
 * store leases only those with something due and no delivery in flight.
 */
export function chooseProbes(
  probing: BreakerCaps['probing'],
  shares: ClaimShares,
  busy: ReadonlySet<string>,
  limit: number,
): string[] {
  type Probe = BreakerCaps['probing'][number];
  const share = shareLimits<Probe>(
    shares,
    (p) => p.accountId,
    (p) => p.origin,
  );
  const idle = probing.filter((p) => !busy.has(p.endpointId));
  return pickDue(idle, [share.accounts, share.origins, share.accountsAtOrigins], limit).map(
    (p) => p.endpointId,
  );
}

/**
 * Of the deliveries a claim brought, those the breakers no longer let out (`capped`, read once the
 * claim is back), counting the worker's own requests still out (`out`) and the ones let out before
 * them: a claim is a round trip, tens of milliseconds under load, and an endpoint's breaker that
 * opened meanwhile (its requests out timing out together) would see its deliveries sent at once,
 * each to hang for the deadline. Pure; the worker gives these back rather than send them.
 */
export function heldBack(
  claims: readonly ClaimedDelivery[],
  { capped }: Pick<BreakerCaps, 'capped'>,
  out: Iterable<ClaimedDelivery>,
): ClaimedDelivery[] {
  const outNow = [...out];
  const limit = (keyOf: (c: ClaimedDelivery) => string, caps: ReadonlyMap<string, number>) => {
    const inFlight = new Map<string, number>();
    for (const c of outNow) inFlight.set(keyOf(c), (inFlight.get(keyOf(c)) ?? 0) + 1);
    return { keyOf, cap: Number.POSITIVE_INFINITY, inFlight, caps };
  };
  const letOut = new Set(
    pickDue(
      claims,
      [
        limit((c) => c.delivery.endpointId, capped.endpoints),
        limit((c) => accountAtOrigin(c.delivery.accountId, c.origin), capped.accountsAtOrigins),
      ],
      claims.length,
    ),
  );
  return claims.filter((c) => !letOut.has(c));
}
