/**
 * The circuit breaker (design D27): a key (an endpoint, an account's endpoints at one origin) whose
 * attempts keep ending unanswered — time-outs, refused or failed connections, names that do not
 * resolve — is backed off. After `threshold` such attempts in a row it opens: none of its
 * deliveries is claimed for a cool-down (30 s, doubling with each trip up to 10 min); then one
 * request at a time probes it (half-open) until one is answered, which closes it. Any answer, a 5xx
 * included, counts as answered: the receiver is there, and the retry schedule deals with what it
 * says. Pure: the worker keeps the states and asks `capOf` before each claim.
 *
 * An endpoint's probe is its earliest due retry, before its earliest new delivery (PROBE_ORDER):
 * so each delivery's schedule runs however often new ones come, and an endpoint that never answers
 * reaches the disabling of design D1.
 *
 * An origin's breaker is each account's own there (ORIGIN_THRESHOLD): customers' endpoints at a
 * relay many share (an automation platform's hooks host) that never answer are their integrations'
 * fault, not the relay's. Shared by the origin, two such customers' time-outs backed the relay off
 * for every customer there, its probes (in due order, so mostly theirs) tripping it again; a relay
 * that is down backs each customer off after their own few attempts.
 *
 * It guards the slots an unanswered attempt holds, up to the 30 s deadline. An attempt refused
 * within HELD_SLOT_MS (a closed port, a name that does not exist) held its slot for next to nothing,
 * so it neither opens nor closes a breaker: such an endpoint keeps its retry schedule at full pace
 * rather than one probe per cool-down, and is disabled on it (design D1).
 */
import type { DeliveryStatus, FailureKind } from './delivery-state.js';

export interface BreakerState {
  /** Unanswered attempts in a row. */
  unanswered: number;
  /** How many times it opened since it last closed. */
  trips: number;
  /** Open until then; half-open after. */
  openUntil: number;
  /** When it last opened (0: never). */
  openedAt: number;
}

export const COOL_DOWN_MS = 30_000;
/**
 * Unanswered attempts in a row that open an endpoint's breaker, and an account's at an origin (its
 * endpoints there together).
 */
export const ENDPOINT_THRESHOLD = 3;
export const ORIGIN_THRESHOLD = 5;
export const MAX_COOL_DOWN_MS = 10 * 60_000;

/** An unanswered attempt that ended sooner held its slot too briefly to count (above). */
export const HELD_SLOT_MS = 1_000;

const UNANSWERED: ReadonlySet<FailureKind> = new Set(['timeout', 'connect', 'dns']);

/** An attempt that went unanswered and held its slot: what counts toward a breaker. */
export const heldUnanswered = (failureKind: FailureKind | null, durationMs: number): boolean =>
  failureKind !== null && UNANSWERED.has(failureKind) && durationMs >= HELD_SLOT_MS;

/**
 * The state after an attempt that ended with `failureKind` (null: answered 2xx) after `durationMs`,
 * at `now`; null is closed.
 */
export function afterAttempt(
  state: BreakerState | null,
  failureKind: FailureKind | null,
  durationMs: number,
  now: number,
  threshold: number,
): BreakerState | null {
  if (failureKind === null || !UNANSWERED.has(failureKind)) return null;
  if (durationMs < HELD_SLOT_MS) return state;
  const unanswered = (state?.unanswered ?? 0) + 1;
  if (unanswered < threshold) return { unanswered, trips: state?.trips ?? 0, openUntil: 0, openedAt: 0 };
  // Begun before the breaker last opened, it was in flight then, not a probe: it says nothing the
  // trip did not. Counted as a trip each, a worker's requests out when it opened doubled the first
  // cool-down as many times (two: 2 min, not 30 s).
  if (state !== null && state.trips > 0 && now - durationMs < state.openedAt) return { ...state, unanswered };
  const trips = (state?.trips ?? 0) + 1;
  const coolDown = Math.min(COOL_DOWN_MS * 2 ** (trips - 1), MAX_COOL_DOWN_MS);
  return { unanswered, trips, openUntil: now + coolDown, openedAt: now };
}

/** The statuses an endpoint's probe is taken from, in this order (above). */
export const PROBE_ORDER = ['awaiting_retry', 'pending'] as const satisfies readonly DeliveryStatus[];

/** Half-open: tripped, its cool-down over; the next request is a probe. */
export const isHalfOpen = (state: BreakerState | null, now: number): boolean =>
  state !== null && state.trips > 0 && now >= state.openUntil;

/** The most requests the key may have open now: `normal` when closed, 0 when open, 1 half-open. */
export function capOf(state: BreakerState | null, now: number, normal: number): number {
  if (state === null || state.trips === 0) return normal;
  return now < state.openUntil ? 0 : Math.min(1, normal);
}

/**
 * An endpoint's cap: capOf's, and 1 from its first unanswered attempt until an answer or the
 * breaker opens. Its other requests out began with that one and will likely end as it did; a slot
 * each frees went to the endpoint again before the third opened the breaker, and a second wave
 * of requests hung for 30 s more (seen: 15 a hanging endpoint, where 8 were out). A healthy endpoint
 * whose one request timed out is back at its cap at its next answer. An origin keeps capOf's:
 * one of its endpoints' time-outs says little of the others'.
 */
export function endpointCapOf(state: BreakerState | null, now: number, normal: number): number {
  if (state !== null && state.trips === 0 && state.unanswered > 0) return Math.min(1, normal);
  return capOf(state, now, normal);
}
