/**
 * Random bytes drawn from the system's generator 4 KiB at a time: a call to it per id, or per
 * lease token, cost more than the rest of making one, at an id per event and per delivery and a
 * token per claim.
 */
const pool = new Uint8Array(4096);
let taken = pool.length;

/**
 * `n` random bytes (at most 4,096), each handed out once: a view into the pool, to be read before
 * the next call, which may draw the pool again.
 */
export function pooledRandom(n: number): Uint8Array {
  if (!Number.isInteger(n) || n < 1 || n > pool.length) {
    throw new RangeError(`pooledRandom takes 1 to ${pool.length} bytes, not ${n}`);
  }
  if (taken + n > pool.length) {
    globalThis.crypto.getRandomValues(pool);
    taken = 0;
  }
  const bytes = pool.subarray(taken, taken + n);
  taken += n;
  return bytes;
}
