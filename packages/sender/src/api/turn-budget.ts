/**
 * Ingest's heavy steps (a large body's parse on the direct path, a batch slice's checks and events)
 * from every request share a few milliseconds of each turn of the event loop: several batches that
 * arrive together would otherwise each take their steps in the same turn, and every other request,
 * and the store's commits, wait for all of them. A step's own time is counted, not what its promises
 * run after it (an item's checks past its account's lookup).
 */

/** The loop's time the steps may take a turn; the first step of a turn runs however long it takes. */
export const TURN_BUDGET_MS = 4;

/** Runs a step when a turn has time for it: its value, or its error. */
export type TurnBudget = <T>(step: () => T) => Promise<Awaited<T>>;

/**
 * Steps run in the order given, in a turn's check phase (`defer`, setImmediate), until `budgetMs`
 * of `clock` has gone; the rest wait for the next turn. `clock` in milliseconds (a test steps it,
 * and runs the turns `defer` is given).
 *
 * @example
 * const inTurn = createTurnBudget();
 * const body = await inTurn(() => JSON.parse(text));
 */
export function createTurnBudget(
  budgetMs = TURN_BUDGET_MS,
  clock: () => number = () => performance.now(),
  defer: (run: () => void) => void = setImmediate,
): TurnBudget {
  const queue: (() => void)[] = [];
  let scheduled = false;
  const run = () => {
    const until = clock() + budgetMs;
    let next = 0;
    // A step given while these run joins them, and waits for the next turn once the budget is gone.
    while (next < queue.length) {
      queue[next++]!();
      if (clock() >= until) break;
    }
    queue.splice(0, next);
    scheduled = false;
    if (queue.length > 0) schedule();
  };
  const schedule = () => {
    scheduled = true;
    defer(run);
  };
  return <T>(step: () => T) =>
    new Promise<Awaited<T>>((resolve, reject) => {
      queue.push(() => {
        try {
          resolve(step() as Awaited<T>);
        } catch (error) {
          reject(error);
        }
      });
      if (!scheduled) schedule();
    });
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
