import { describe, expect, it } from 'vitest';
import { ATTEMPTS_KEPT } from '../domain/attempts-kept.js';
import { ATTEMPT_TIMEOUT_MS } from '../domain/schedule.js';
import { settingsOf } from './options.js';
import { checkQuotas } from './quotas.js';

describe('the 30-second rule', () => {
  it('gives an attempt 30 s unless set otherwise', () => {
    expect(ATTEMPT_TIMEOUT_MS).toBe(30_000);
    expect(settingsOf({ store: {} as never }).timeoutMs).toBe(30_000);
    expect(settingsOf({ store: {} as never, attemptTimeoutMs: 500 }).timeoutMs).toBe(500);
  });
});

describe('counts and times the library is given', () => {
  it.each([
    ['concurrency', 0],
    ['leaseMs', 2.5],
    ['batchSize', -1],
  ])('refuses %s of %s, naming the value', (name, value) => {
    expect(() => settingsOf({ store: {} as never, [name]: value })).toThrow(
      expect.objectContaining({
        code: 'invalid_option',
        message: `${name} must be a whole number above 0, got ${value}`,
      }),
    );
  });

  it('refuses a schedule of more attempts than a delivery keeps', () => {
    const delays = (n: number) => Array.from({ length: n }, () => 1_000);
    expect(
      settingsOf({ store: {} as never, retryDelaysMs: delays(ATTEMPTS_KEPT - 1) }).rules.schedule.delaysMs,
    ).toHaveLength(ATTEMPTS_KEPT - 1);
    expect(() => settingsOf({ store: {} as never, retryDelaysMs: delays(ATTEMPTS_KEPT) })).toThrow(
      `a schedule takes at most ${ATTEMPTS_KEPT - 1} retry delays`,
    );
  });

  it('refuses a quota that is not a whole number above 0', () => {
    expect(() => checkQuotas({ eventsPerSecond: 0 })).toThrow(
      'quotas.eventsPerSecond must be a whole number above 0, got 0',
    );
    expect(checkQuotas({ eventsPerSecond: 5 }).eventsPerSecond).toBe(5);
  });
});
