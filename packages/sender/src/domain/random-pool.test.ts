import { expect, it } from 'vitest';
import { pooledRandom } from './random-pool.js';

it('hands out each byte of the pool once, and draws it again when a request does not fit', () => {
  const views = Array.from({ length: 700 }, (_, i) => pooledRandom(1 + (i % 16)));
  for (const [i, v] of views.entries()) expect(v.byteLength).toBe(1 + (i % 16));
  // Views of one drawing of the pool never overlap: each starts where the one before it ended,
  // unless the pool was drawn again between them (it starts at 0 then).
  let drawn = 0;
  for (let i = 1; i < views.length; i++) {
    const [a, b] = [views[i - 1]!, views[i]!];
    if (b.byteOffset === 0) drawn++;
    else expect(b.byteOffset).toBe(a.byteOffset + a.byteLength);
  }
  // 700 requests of 8.5 bytes on average: about 6,000 bytes, more than one pool of 4,096.
  expect(drawn).toBeGreaterThanOrEqual(1);
});

it('refuses a count it cannot hand out once each', () => {
  for (const n of [0, -1, 1.5, 4097, Number.NaN]) expect(() => pooledRandom(n)).toThrow(RangeError);
  expect(pooledRandom(4096)).toHaveLength(4096);
});
