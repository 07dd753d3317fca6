/** How long a SQLite flush holds the event loop: its statements run on it (sqlite/publish.ts, record-attempt.ts). */

/**
 * How long one flush of a synchronous store (SQLite) may hold the event loop: a flush of 256 clicks
 * to eight endpoints each writes some 2,300 rows, tens of milliseconds every other request would
 * wait for.
 */
export const FLUSH_BUDGET_MS = 5;

/**
 * `write` for each item in order, until FLUSH_BUDGET_MS has passed (at least one item): what a
 * synchronous flush returns, so that the batcher hands it the rest after a turn of the loop.
 */
export function withinBudget<I, R>(items: readonly I[], write: (item: I, index: number) => R): R[] {
  const until = performance.now() + FLUSH_BUDGET_MS;
  const done: R[] = [];
  for (const item of items) {
    done.push(write(item, done.length));
    if (performance.now() >= until) break;
  }
  return done;
}
