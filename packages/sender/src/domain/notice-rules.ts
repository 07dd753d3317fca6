/**
 * When operator notifications are written (design D50): the failure count that warns, and the
 * threshold the body names. Apart from the notices themselves, so reading the command line's
 * settings loads nothing of the wire format.
 */

/** The default share of the disable threshold at which `endpoint.failing` is sent: half. */
export const DEFAULT_FAILING_SHARE = 0.5;

/** What the stores need to write notices; absent, none is written. */
export interface NoticeRules {
  /** Consecutive failures that send `endpoint.failing`, once per streak. */
  failingAt: number;
  /** The disable threshold, for the body. */
  threshold: number;
}

/**
 * The failure count that warns: the share of the threshold, rounded up, at least 1 and below the
 * threshold (a warning at the threshold would arrive with the disabling).
 *
 * @example noticeRules(0.5, 10) // → { failingAt: 5, threshold: 10 }
 */
export function noticeRules(failingShare: number, threshold: number): NoticeRules {
  if (!(Number.isFinite(failingShare) && failingShare > 0 && failingShare < 1)) {
    throw new RangeError('the failing share must be a number above 0 and below 1, such as 0.5');
  }
  return { failingAt: Math.min(Math.max(1, Math.ceil(failingShare * threshold)), threshold - 1), threshold };
}
