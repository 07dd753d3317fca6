/**
 * The steps of an engine's long moves and deletions, one at a time (design D83): each loop's next
 * step waits for every step asked for before it, then for a turn of the event loop. However many
 * endpoints one account pauses, resumes or deletes at once, their steps hold the event loop
 * (SQLite) or a pooled connection (PostgreSQL) as one loop's would, the endpoints taking turns.
 *
 * @module
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

export interface StepTurns {
  /** Runs `step` once the steps asked for before it have ended, at a later turn of the event loop. */
  take<T>(step: () => T | Promise<T>): Promise<T>;
}

/**
 * @example
 * const turns = stepTurns();
 * await inSteps(() => store.settleQueueStep(id, PRUNE_STEP, now), 1, stopped, turns);
 */
export function stepTurns(): StepTurns {
  // The last step asked for, settled either way: the next one goes after it.
  let last: Promise<unknown> = Promise.resolve();
  return {
    take(step) {
      const turn = last.then(() => nextTurn()).then(step);
      last = turn.catch(() => undefined);
      return turn;
    },
  };
}
