/**
 * What one kind of long work (the engine's steps, the reads that cost what an account's log holds)
 * may hold at once of a store's pooled connections, whose claims, records and publishes need them
 * too: sized for the default pool of ten, and smaller with a smaller pool, but always one, so with a
 * pool of three or fewer these kinds may hold all of it. With the default pool they hold at most 8
 * of the 10 together (steps 4, statistics 2, searches 2), and only when all run at their most.
 *
 * @module
 */

/**
 * `most`, and no more than `fifths` fifths of `connections` (rounded down), at least one; `most`
 * for a store that pools none (`connections` undefined) or tells no number.
 *
 * @example
 * poolShare(10, 4, 2); // 4
 * poolShare(4, 4, 2); // 1
 */
export function poolShare(connections: number | undefined, most: number, fifths: number): number {
  if (connections === undefined || !Number.isFinite(connections)) return most;
  return Math.max(1, Math.min(most, Math.floor((connections * fifths) / 5)));
}
