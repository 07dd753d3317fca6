import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RECEIVER_POLICY,
  heededRetryAt,
  isGoneAnswer,
  parseRetryAfter,
  retryAfterCapMs,
} from './receiver-hints.js';
import { DEFAULT_SCHEDULE } from './schedule.js';

const NOW = Date.UTC(2026, 10, 22, 9, 0, 0);

describe('parseRetryAfter', () => {
  it.each([
    ['0', 0],
    ['120', 120_000],
    [' 30 ', 30_000],
    ['999999999999', 10 * 365 * 24 * 3600 * 1000],
    ['Sun, 22 Nov 2026 09:05:00 GMT', 5 * 60_000],
    ['Sunday, 22-Nov-26 09:01:00 GMT', 60_000],
    ['Sun Nov 22 09:00:30 2026', 30_000],
    ['Sun, 22 Nov 2026 08:00:00 GMT', 0],
  ])('%s → %s ms', (value, ms) => {
    expect(parseRetryAfter(value, NOW)).toBe(ms);
  });

  it.each([null, undefined, '', '-5', '1.5', '1e3', 'soon', '2026-11-22', 'Sun, 99 Foo 2026 99:99:99 GMT'])(
    'refuses %o',
    (value) => {
      expect(parseRetryAfter(value, NOW)).toBeNull();
    },
  );
});

describe('heededRetryAt', () => {
  const scheduled = NOW + 60_000;
  const at = (statusCode: number | null, retryAfter: string | null, policy = DEFAULT_RECEIVER_POLICY) =>
    heededRetryAt(scheduled, { statusCode, retryAfter, finishedAt: NOW }, DEFAULT_SCHEDULE, policy);

  it('moves the retry later on a 429 or 503 only, never earlier, at most the longest step', () => {
    expect(at(429, '300')).toBe(NOW + 300_000);
    expect(at(503, '300')).toBe(NOW + 300_000);
    expect(at(500, '300')).toBe(scheduled);
    expect(at(410, '300')).toBe(scheduled);
    expect(at(null, '300')).toBe(scheduled);
    expect(at(429, '10')).toBe(scheduled);
    expect(at(429, null)).toBe(scheduled);
    expect(at(429, String(48 * 3600))).toBe(NOW + 8 * 3600_000);
    expect(at(429, '300', { honourRetryAfter: false, disableOnGone: false })).toBe(scheduled);
  });

  it('caps at the longest step of the schedule in use, scaled with it', () => {
    expect(retryAfterCapMs(DEFAULT_SCHEDULE)).toBe(8 * 3600_000);
    expect(retryAfterCapMs({ ...DEFAULT_SCHEDULE, timeScale: 0.001 })).toBe(28_800);
    expect(retryAfterCapMs({ delaysMs: [] })).toBe(0);
  });
});

describe('isGoneAnswer', () => {
  it('is a 410 under the policy that asks for it, and nothing else', () => {
    expect(isGoneAnswer(410, DEFAULT_RECEIVER_POLICY)).toBe(false);
    expect(isGoneAnswer(410, { honourRetryAfter: true, disableOnGone: true })).toBe(true);
    expect(isGoneAnswer(404, { honourRetryAfter: true, disableOnGone: true })).toBe(false);
    expect(isGoneAnswer(null, { honourRetryAfter: true, disableOnGone: true })).toBe(false);
  });
});
