import { describe, expect, it } from 'vitest';
import { poolShare } from './pool-shares.js';

describe('poolShare', () => {
  it('takes its most of the default pool, less of a smaller one, and always one', () => {
    expect([10, 20, 5, 4, 2, 1].map((n) => poolShare(n, 4, 2))).toEqual([4, 4, 2, 1, 1, 1]);
    expect([10, 20, 9, 4].map((n) => poolShare(n, 2, 1))).toEqual([2, 2, 1, 1]);
    expect(poolShare(undefined, 4, 2)).toBe(4);
    expect(poolShare(Number.NaN, 4, 2)).toBe(4);
  });
});
