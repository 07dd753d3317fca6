/**
 * Retention in small steps: each step deletes at most PRUNE_STEP rows (a store may take fewer) in
 * a short transaction of its own, and the event loop runs between steps, so a prune of millions of rows never holds the
 * process or the database for long.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

export const PRUNE_STEP = 1_000;

/** Runs `step` until it deletes fewer than `size`; resolves with the total it deleted. */
export async function inSteps(step: () => number | Promise<number>, size = PRUNE_STEP): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await step();
    total += n;
    if (n < size) return total;
    await nextTurn();
  }
}
