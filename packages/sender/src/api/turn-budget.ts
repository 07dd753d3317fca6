/**
 * Ingest's heavy steps (a large body's parse on the direct path, a batch slice's checks and events)
 * from every request share a few milliseconds of each turn of the event loop: several batches that
 * arrive together would otherwise each take their steps in the same turn, and every other request,
 * and the store's commits, wait for all of them. A step's own time is counted, not what its promises
 * run after it (an item's checks past its account's lookup).
 */
import { createBatcher, type Settled } from '../store/batcher.js';

/** The loop's time the steps may take a turn; the first step of a turn runs however long it takes. */
export const TURN_BUDGET_MS = 4;

/** Runs a step when a turn has time for it: its value, or its error. */
export type TurnBudget = <T>(step: () => T) => Promise<Awaited<T>>;

/**
 * Steps run in the order given, a turn's worth at a time (createBatcher: what a flush had no time
 * for, and steps given meanwhile, wait a turn), until `budgetMs` of `clock` has gone. `clock` in
 * milliseconds (a test steps it).
 *
 * @example
 * const inTurn = createTurnBudget();
 * const body = await inTurn(() => JSON.parse(text));
 */
export function createTurnBudget(
  budgetMs = TURN_BUDGET_MS,
  clock: () => number = () => performance.now(),
): TurnBudget {
  const run = createBatcher((steps: (() => unknown)[]) => {
    const until = clock() + budgetMs;
    const settled: Settled<unknown>[] = [];
    for (const step of steps) {
      try {
        settled.push({ ok: true, value: step() });
      } catch (error) {
        settled.push({ ok: false, error });
      }
      if (clock() >= until) break;
    }
    return settled;
  }, Number.POSITIVE_INFINITY);
  return <T>(step: () => T) => run(step) as Promise<Awaited<T>>;
}

/** The process's budget: one event loop, whatever the number of servers on it. */
export const inTurn: TurnBudget = createTurnBudget();

/** A step run at once: its value, or its error. */
export const atOnce: TurnBudget = <T>(step: () => T) =>
  new Promise<Awaited<T>>((resolve) => resolve(step() as Awaited<T>));

/**
 * The budget where the store commits on this thread (SQLite); steps at once where it is a round
 * trip away (PostgreSQL), which leaves the loop time to spare (design D74).
 */
export const budgetFor = (store: { recordsOverNetwork: boolean }): TurnBudget =>
  store.recordsOverNetwork ? atOnce : inTurn;
