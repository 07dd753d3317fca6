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

/**
 * Runs `step` until it deletes none, the event loop free between steps, or until `stopped()`
 * before one; resolves with the total it deleted. For steps a store may make smaller than asked
 * (SQLite's: sqlite/step-rows.ts), where a short step says nothing about what is left.
 */
export async function untilNone(
  step: () => Promise<number>,
  stopped: () => boolean = () => false,
): Promise<number> {
  let total = 0;
  for (let first = true; !stopped(); first = false) {
    if (!first) await nextTurn();
    const n = await step();
    if (n === 0) break;
    total += n;
  }
  return total;
}
