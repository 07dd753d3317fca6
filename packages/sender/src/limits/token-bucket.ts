/**
 * Rate limits as token buckets (design D26): a bucket holds at most `burst` tokens and refills at
 * `perSecond`; taking more than it holds is refused with how long until there would be enough.
 * Pure: the state and the time come in, the new state and the verdict go out.
 */
export interface Rate {
  /** Tokens added per second. */
  perSecond: number;
  /** The most a bucket holds: what a spike may take at once after a quiet spell. */
  burst: number;
}

export interface Bucket {
  tokens: number;
  at: number;
}

export type Take = { ok: true; bucket: Bucket } | { ok: false; bucket: Bucket; retryAfterMs: number };

export function take(rate: Rate, bucket: Bucket | undefined, now: number, n = 1): Take {
  const elapsed = bucket ? Math.max(0, now - bucket.at) : 0;
  const tokens = Math.min(rate.burst, (bucket?.tokens ?? rate.burst) + (elapsed * rate.perSecond) / 1000);
  if (n <= tokens) return { ok: true, bucket: { tokens: tokens - n, at: now } };
  const missing = Math.min(n, rate.burst) - tokens;
  return {
    ok: false,
    bucket: { tokens, at: now },
    retryAfterMs: Math.ceil((missing * 1000) / rate.perSecond),
  };
}

/** A rate per minute, with the whole minute's allowance as its burst. */
export const perMinute = (n: number): Rate => ({ perSecond: n / 60, burst: n });
