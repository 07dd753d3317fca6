/**
 * The retry schedule as data (design R12): five retries after the first attempt, each delay measured
 * from the failure of the previous attempt. Six attempts in all: +0, +1 m, +6 m, +36 m, +2 h 36 m,
 * +10 h 36 m.
 */
import { ATTEMPTS_KEPT } from './attempts-kept.js';

export const RETRY_DELAYS_MS: readonly number[] = Object.freeze([
  60_000, // 1 minute
  5 * 60_000, // 5 minutes
  30 * 60_000, // 30 minutes
  2 * 60 * 60_000, // 2 hours
  8 * 60 * 60_000, // 8 hours
]);

/** Receiver time-out per attempt (design R11). */
export const ATTEMPT_TIMEOUT_MS = 30_000;

export interface RetrySchedule {
  /** Delay before retry n (index n - 1), in ms. Its length is the number of retries. */
  delaysMs: readonly number[];
  /** Multiplies every delay: 0.001 runs the whole schedule in ~38 s for demos. Default 1. */
  timeScale?: number;
}

export const DEFAULT_SCHEDULE: RetrySchedule = { delaysMs: RETRY_DELAYS_MS };

/** How many attempts a delivery gets in all: the first plus one per retry. */
export function maxAttempts(schedule: RetrySchedule): number {
  return schedule.delaysMs.length + 1;
}

/**
 * The delay before the attempt that follows attempt `attemptNumber` (1-based), or `null` when
 * that was the last one.
 */
export function delayAfterAttempt(schedule: RetrySchedule, attemptNumber: number): number | null {
  const delay = schedule.delaysMs[attemptNumber - 1];
  if (delay === undefined) return null;
  return Math.round(delay * (schedule.timeScale ?? 1));
}

/** Checks a schedule once at start-up, so a bad setting fails loudly instead of retrying oddly. */
export function assertSchedule(schedule: RetrySchedule): void {
  if (!schedule.delaysMs.every((d) => Number.isFinite(d) && d >= 0)) {
    throw new RangeError('retry delays must be finite, non-negative numbers of milliseconds');
  }
  // Its attempts all kept: a longer schedule would lose its first ones to its last (attempts-kept.ts).
  if (schedule.delaysMs.length >= ATTEMPTS_KEPT) {
    throw new RangeError(`a schedule takes at most ${ATTEMPTS_KEPT - 1} retry delays`);
  }
  const scale = schedule.timeScale ?? 1;
  if (!(Number.isFinite(scale) && scale > 0)) throw new RangeError('timeScale must be a positive number');
}
