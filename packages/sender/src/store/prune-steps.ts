/**
 * Retention in small steps: each step deletes at most PRUNE_STEP rows in a short transaction of
 * its own, and the event loop runs between steps, so a prune of millions of rows never holds the
 * process or the database for long.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

export const PRUNE_STEP = 1_000;

/** Runs `step` until it deletes fewer than PRUNE_STEP; resolves with the total it deleted. */
export async function inSteps(step: () => number | Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await step();
    total += n;
    if (n < PRUNE_STEP) return total;
    await nextTurn();
  }
}
