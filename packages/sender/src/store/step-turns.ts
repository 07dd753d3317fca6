/**
 * The steps of an engine's long moves and endpoint deletions, a few at a time (design D83): a step
 * starts once fewer than `atOnce` are running, in the order asked, at a later turn of the event loop.
 * However many endpoints one account pauses, resumes or deletes at once, their steps hold the event
 * loop (SQLite: one at a time) or PostgreSQL's pooled connections (a few) as that many loops would,
 * the endpoints taking turns.
 *
 * @module
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Steps at once for a store a network round trip away (PostgreSQL): 4 of the 10 connections it
 * pools by default, the rest left to claims, records and publishes.
 */
export const STEPS_AT_ONCE_OVER_NETWORK = 4;

export interface StepTurns {
  /** Runs `step` in its turn, at a later turn of the event loop than the one it was asked in. */
  take<T>(step: () => T | Promise<T>): Promise<T>;
}

/**
 * @example
 * const turns = stepTurns(1);
 * await inSteps(() => store.settleQueueStep(id, PRUNE_STEP, now), 1, stopped, turns);
 */
export function stepTurns(atOnce: number): StepTurns {
  const waiting: (() => void)[] = [];
  let running = 0;
  const startNext = () => {
    if (running >= atOnce) return;
    const start = waiting.shift();
    if (!start) return;
    running++;
    start();
  };
  return {
    async take(step) {
      await new Promise<void>((resolve) => {
        waiting.push(resolve);
        startNext();
      });
      try {
        await nextTurn();
        return await step();
      } finally {
        running--;
        startNext();
      }
    },
  };
}
