import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { createLimiter } from './limiter.js';
import { perMinute, take } from './token-bucket.js';

const rate = { perSecond: 10, burst: 100 };

describe('take', () => {
  it('lets a burst through at once, then the refill rate', () => {
    let bucket = take(rate, undefined, 0, 100);
    expect(bucket.ok).toBe(true);
    const refused = take(rate, bucket.bucket, 0, 1);
    expect(refused).toMatchObject({ ok: false, retryAfterMs: 100 });
    bucket = take(rate, refused.bucket, 100, 1);
    expect(bucket.ok).toBe(true);
  });

  it('refills up to the burst, never past it', () => {
    const empty = take(rate, undefined, 0, 100).bucket;
    const later = take(rate, empty, 3_600_000, 0);
    expect(later.bucket.tokens).toBe(100);
  });

  it('says how long until a larger request would fit, and caps that at a full bucket', () => {
    const empty = take(rate, undefined, 0, 100).bucket;
    expect(take(rate, empty, 0, 50)).toMatchObject({ ok: false, retryAfterMs: 5_000 });
    expect(take(rate, empty, 0, 500)).toMatchObject({ ok: false, retryAfterMs: 10_000 });
  });

  it('perMinute allows the minute at once and refills over the minute', () => {
    expect(perMinute(60)).toEqual({ perSecond: 1, burst: 60 });
  });
});

describe('createLimiter', () => {
  it('keeps one bucket per key, and a refund gives tokens back', () => {
    const clock = new ManualClock(0);
    const limiter = createLimiter(perMinute(2), clock);
    expect(limiter.take('a').ok).toBe(true);
    expect(limiter.take('a').ok).toBe(true);
    expect(limiter.take('a')).toEqual({ ok: false, retryAfterMs: 30_000 });
    expect(limiter.take('b').ok).toBe(true);
    limiter.refund('a');
    expect(limiter.take('a').ok).toBe(true);
    clock.advance(30_000);
    expect(limiter.take('a').ok).toBe(true);
  });

  it('forgets refilled buckets as keys pile up, and still limits the active ones', () => {
    const clock = new ManualClock(0);
    const limiter = createLimiter({ perSecond: 1, burst: 1 }, clock);
    expect(limiter.take('hot').ok).toBe(true);
    for (let i = 0; i < 20_000; i++) limiter.take(`k${i}`);
    expect(limiter.take('hot').ok).toBe(false);
  });

  it('reads each bucket a bounded number of times while more keys are active than it sweeps at', () => {
    // Every bucket read (a take, or a sweep's look at one) reads the rate's refill; none refills
    // here, so no sweep frees anything. Sweeping at every take read the whole map each time.
    let reads = 0;
    const rate = {
      get perSecond() {
        reads++;
        return 1 / 3600;
      },
      burst: 1,
    };
    const limiter = createLimiter(rate, new ManualClock(0));
    const keys = 40_000;
    for (let i = 0; i < keys; i++) expect(limiter.take(`k${i}`).ok).toBe(true);
    expect(limiter.take('k0').ok).toBe(false);
    expect(reads).toBeLessThan(5 * keys);
  });
});
