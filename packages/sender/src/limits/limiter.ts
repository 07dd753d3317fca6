/**
 * Token buckets by key (an account, a client address), kept in the process. A bucket that has
 * refilled is the same as no bucket, so full ones are dropped as the map grows: memory follows
 * the keys active within a refill, never every key ever seen. The next sweep waits until the map
 * has doubled: with more keys active than SWEEP_AT (many addresses within a refill), sweeping at
 * every take made each one read the whole map.
 */
import type { Clock } from '../clock.js';
import { type Bucket, type Rate, take } from './token-bucket.js';

export interface Limiter {
  /** Takes `n` tokens from `key`'s bucket; when it holds too few, how long until it will. */
  take(key: string, n?: number): { ok: true } | { ok: false; retryAfterMs: number };
  /** Whether `n` tokens could be taken now, taking none. */
  peek(key: string, n?: number): { ok: true } | { ok: false; retryAfterMs: number };
  /** Gives `n` back (an accepted request turned out not to count). */
  refund(key: string, n?: number): void;
}

const SWEEP_AT = 10_000;

export function createLimiter(rate: Rate, clock: Clock): Limiter {
  const buckets = new Map<string, Bucket>();
  let sweepAt = SWEEP_AT;
  const sweep = (now: number) => {
    for (const [key, bucket] of buckets) {
      if (bucket.tokens + ((now - bucket.at) * rate.perSecond) / 1000 >= rate.burst) buckets.delete(key);
    }
    sweepAt = Math.max(SWEEP_AT, 2 * buckets.size);
  };
  return {
    take(key, n = 1) {
      const now = clock.now();
      if (buckets.size >= sweepAt) sweep(now);
      const result = take(rate, buckets.get(key), now, n);
      buckets.set(key, result.bucket);
      return result.ok ? { ok: true } : { ok: false, retryAfterMs: result.retryAfterMs };
    },
    peek(key, n = 1) {
      const result = take(rate, buckets.get(key), clock.now(), n);
      return result.ok ? { ok: true } : { ok: false, retryAfterMs: result.retryAfterMs };
    },
    refund(key, n = 1) {
      const bucket = buckets.get(key);
      if (bucket) bucket.tokens = Math.min(rate.burst, bucket.tokens + n);
    },
  };
}
