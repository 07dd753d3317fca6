/**
 * The steps of an engine's long moves and endpoint deletions, a few at a time, in turns by account
 * (design D83): a step starts once fewer than `atOnce` are running, the waiting account with the
 * fewest running first (limits/turns-by-account.ts), at a later turn of the event loop. However
 * many endpoints one account pauses, resumes or deletes at once, their steps hold the event loop
 * (SQLite: one at a time) or PostgreSQL's pooled connections (a few) as that many loops would, and
 * another account's step goes after the one running, not after all of theirs.
 *
 * @module
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { turnsByAccount } from '../limits/turns-by-account.js';

/**
 * Steps at once for a store a network round trip away (PostgreSQL): 4 of the 10 connections it
 * pools by default, the rest left to claims, records and publishes.
 */
export const STEPS_AT_ONCE_OVER_NETWORK = 4;

export interface StepTurns {
  /** Runs `step` in `accountId`'s turn, at a later turn of the event loop than the one it was asked in. */
  take<T>(accountId: string, step: () => T | Promise<T>): Promise<T>;
}

/**
 * @example
 * const turns = stepTurns(1);
 * await inSteps(() => store.settleQueueStep(id, PRUNE_STEP, now), 1, stopped, (step) =>
 *   turns.take(accountId, step),
 * );
 */
export function stepTurns(atOnce: number): StepTurns {
  const turns = turnsByAccount(atOnce);
  return {
    take: (accountId, step) =>
      turns.take(accountId, async () => {
        await nextTurn();
        return step();
      }),
  };
}
