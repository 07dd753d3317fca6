import { describe, expect, it } from 'vitest';
import {
  type AttemptOutcome,
  decideAfterAttempt,
  FAILURE_KINDS,
  isSuccessStatus,
  resumeStatus,
} from './delivery-state.js';
import { DEFAULT_SCHEDULE, delayAfterAttempt, maxAttempts, RETRY_DELAYS_MS } from './schedule.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const ok: AttemptOutcome = { ok: true, statusCode: 200 };
const failure = (kind: (typeof FAILURE_KINDS)[number]): AttemptOutcome => ({
  ok: false,
  kind,
  message: kind,
});

describe('the retry schedule (design R12)', () => {
  it('is 1 m, 5 m, 30 m, 2 h, 8 h: six attempts in all', () => {
    expect(RETRY_DELAYS_MS).toEqual([MIN, 5 * MIN, 30 * MIN, 2 * HOUR, 8 * HOUR]);
    expect(maxAttempts(DEFAULT_SCHEDULE)).toBe(6);
    expect([1, 2, 3, 4, 5, 6].map((n) => delayAfterAttempt(DEFAULT_SCHEDULE, n))).toEqual([
      MIN,
      5 * MIN,
      30 * MIN,
      2 * HOUR,
      8 * HOUR,
      null,
    ]);
  });

  it('puts attempts at +0, +1 m, +6 m, +36 m, +2 h 36 m, +10 h 36 m when every one fails at once', () => {
    let at = 0;
    const times = [at];
    for (let before = 0; before < 5; before++) {
      const d = decideAfterAttempt(before, failure('http_status'), at, DEFAULT_SCHEDULE);
      at = d.nextAttemptAt!;
      times.push(at);
    }
    expect(times).toEqual([0, MIN, 6 * MIN, 36 * MIN, 2 * HOUR + 36 * MIN, 10 * HOUR + 36 * MIN]);
  });

  it('scales every delay by timeScale', () => {
    expect(delayAfterAttempt({ ...DEFAULT_SCHEDULE, timeScale: 0.001 }, 5)).toBe(28_800);
  });
});

describe('decideAfterAttempt (design R11, R13)', () => {
  it.each([0, 1, 2, 3, 4, 5])('a 2xx on attempt %i+1 delivers and stops', (before) => {
    expect(decideAfterAttempt(before, ok, 1000, DEFAULT_SCHEDULE)).toEqual({
      status: 'delivered',
      attempts: before + 1,
      nextAttemptAt: null,
      final: 'delivered',
    });
  });

  it.each(FAILURE_KINDS)(
    'a %s failure before the last attempt awaits the next retry, measured from the failure',
    (kind) => {
      for (let before = 0; before < 5; before++) {
        const d = decideAfterAttempt(before, failure(kind), 5000, DEFAULT_SCHEDULE);
        expect(d).toEqual({
          status: 'awaiting_retry',
          attempts: before + 1,
          nextAttemptAt: 5000 + RETRY_DELAYS_MS[before]!,
          final: null,
        });
      }
    },
  );

  it.each(FAILURE_KINDS)('a %s failure of the 5th retry (6th attempt) fails the delivery', (kind) => {
    expect(decideAfterAttempt(5, failure(kind), 0, DEFAULT_SCHEDULE)).toEqual({
      status: 'failed',
      attempts: 6,
      nextAttemptAt: null,
      final: 'failed',
    });
  });

  it('fails at once a manual retry beyond the schedule that fails again', () => {
    expect(decideAfterAttempt(6, failure('connect'), 0, DEFAULT_SCHEDULE).status).toBe('failed');
    expect(decideAfterAttempt(6, ok, 0, DEFAULT_SCHEDULE).status).toBe('delivered');
  });
});

describe('status helpers', () => {
  it('counts only 2xx as success: 1xx, 3xx, 4xx and 5xx fail (design R11; redirects are not followed)', () => {
    for (let code = 100; code < 600; code++) expect(isSuccessStatus(code)).toBe(code >= 200 && code < 300);
  });

  it('resumes a delivery as pending before any attempt, else awaiting retry', () => {
    expect(resumeStatus(0)).toBe('pending');
    expect(resumeStatus(3)).toBe('awaiting_retry');
  });
});
