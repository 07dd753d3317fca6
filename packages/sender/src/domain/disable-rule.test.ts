import { describe, expect, it } from 'vitest';
import type { AttemptDecision } from './delivery-state.js';
import { DEFAULT_DISABLE_POLICY, type DisablePolicy, decideEndpoint } from './disable-rule.js';

const delivered: AttemptDecision = {
  status: 'delivered',
  attempts: 1,
  nextAttemptAt: null,
  final: 'delivered',
};
const retrying: AttemptDecision = {
  status: 'awaiting_retry',
  attempts: 1,
  nextAttemptAt: 60_000,
  final: null,
};
const failed: AttemptDecision = { status: 'failed', attempts: 6, nextAttemptAt: null, final: 'failed' };
const perAttempt: DisablePolicy = { threshold: 10, countPer: 'attempt' };

describe('the disable rule, per delivery (the default, design D1)', () => {
  it('counts a delivery that ends failed, and disables at the 10th in a row', () => {
    let count = 0;
    for (let i = 1; i <= 9; i++) {
      const d = decideEndpoint(count, failed, DEFAULT_DISABLE_POLICY);
      expect(d).toEqual({ consecutiveFailures: i, disable: false });
      count = d.consecutiveFailures;
    }
    expect(decideEndpoint(count, failed, DEFAULT_DISABLE_POLICY)).toEqual({
      consecutiveFailures: 10,
      disable: true,
    });
  });

  it('does not count a failed attempt that will be retried', () => {
    expect(decideEndpoint(9, retrying, DEFAULT_DISABLE_POLICY)).toEqual({
      consecutiveFailures: 9,
      disable: false,
    });
  });

  it('resets the count on any delivered delivery', () => {
    expect(decideEndpoint(9, delivered, DEFAULT_DISABLE_POLICY)).toEqual({
      consecutiveFailures: 0,
      disable: false,
    });
  });
});

describe('the disable rule, per attempt (option)', () => {
  it('counts every failed attempt and resets on a success', () => {
    expect(decideEndpoint(0, retrying, perAttempt)).toEqual({ consecutiveFailures: 1, disable: false });
    expect(decideEndpoint(9, retrying, perAttempt)).toEqual({ consecutiveFailures: 10, disable: true });
    expect(decideEndpoint(5, failed, perAttempt)).toEqual({ consecutiveFailures: 6, disable: false });
    expect(decideEndpoint(9, delivered, perAttempt)).toEqual({ consecutiveFailures: 0, disable: false });
  });

  it('honours another threshold', () => {
    expect(decideEndpoint(2, failed, { threshold: 3, countPer: 'delivery' }).disable).toBe(true);
  });
});
