/**
 * Retention in small steps: each step deletes at most PRUNE_STEP rows (a store may take fewer) in
 * a short transaction of its own, and the event loop runs between steps, so a prune of millions of rows never holds the
 * process or the database for long.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

export const PRUNE_STEP = 1_000;

/**
 * Runs `step` until it deletes fewer than `size`, the event loop free between steps, or until
 * `stopped()` before one; resolves with the total it deleted. A size of 1 runs until a step deletes
 * none: for steps a store may make smaller than asked (SQLite's: sqlite/step-rows.ts), where a short
 * step says nothing about what is left. With `turn`, each step waits its turn among the other
 * loops' (step-turns.ts).
 */
export async function inSteps(
  step: () => number | Promise<number>,
  size = PRUNE_STEP,
  stopped: () => boolean = () => false,
  turn?: (step: () => number | Promise<number>) => Promise<number>,
): Promise<number> {
  let total = 0;
  for (let first = true; !stopped(); first = false) {
    let n: number;
    // Stopped while it waited for its turn: ends as if before it.
    if (turn) n = await turn(() => (stopped() ? 0 : step()));
    else {
      if (!first) await nextTurn();
      n = await step();
    }
    total += n;
    if (n < size) break;
  }
  return total;
}
