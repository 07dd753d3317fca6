/**
 * What one kind of long work (the engine's steps, the statistics' reads) may hold at once of a
 * store's pooled connections: never the whole pool, whose connections claims, records and
 * publishes need too. Sized for the default pool of ten, and smaller with a smaller pool.
 *
 * @module
 */

/**
 * `most`, and no more than `fifths` fifths of `connections` (rounded down), at least one; `most`
 * for a store that pools none (`connections` undefined).
 *
 * @example
 * poolShare(10, 4, 2); // 4
 * poolShare(4, 4, 2); // 1
 */
export function poolShare(connections: number | undefined, most: number, fifths: number): number {
  if (connections === undefined) return most;
  return Math.max(1, Math.min(most, Math.floor((connections * fifths) / 5)));
}
