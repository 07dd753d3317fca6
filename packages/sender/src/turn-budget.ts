/**
 * The event loop's heavy steps share a few milliseconds of each turn: ingest's (a large body's
 * parse, a batch slice's checks and events, design D74) and a large delivery's start (its signing
 * and its bytes handed to the connection, design D76). Requests that arrive together, or the
 * deliveries of one claim, would otherwise each take their steps in the same turn, and every other
 * request, the timers and the store's commits wait for all of them. A step's own time is counted,
 * not what its promises run after it (an item's checks past its account's lookup).
 */
import { createBatcher, type Settled } from './store/batcher.js';

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
 * The budget of a batch's steps: the turn's where the store commits on this thread (SQLite); at
 * once where it is a round trip away (PostgreSQL), which leaves the loop time to spare (design D74).
 */
export const budgetFor = (store: { recordsOverNetwork: boolean }): TurnBudget =>
  store.recordsOverNetwork ? atOnce : inTurn;

/**
 * A body larger than this is a heavy step: a single event's parse, a delivery's signing and
 * sending. A click's body is about 1 KiB; one of 240 KiB took 2.6 ms to parse on a bench machine,
 * and each of its deliveries 0.2 ms to sign before its bytes were encrypted and written.
 */
export const LARGE_BODY_BYTES = 64 * 1024;

/**
 * How a large body's parse waits for the loop: a batch's as its other steps (budgetFor), a single
 * event's in the turn's budget on every store. A single event's parse is one step, and on
 * PostgreSQL the requests of a burst of large events each took theirs in the same turn: the loop's
 * delay p99 was 110 to 144 ms with events of 240 KiB (design D76).
 */
export const parseBudgetFor = (store: { recordsOverNetwork: boolean }, batch: boolean): TurnBudget =>
  batch ? budgetFor(store) : inTurn;

/**
 * How a large body's delivery starts: in the turn's budget where this thread encrypts and writes
 * it, at once where a delivery thread sends it. There this thread only signs the body and posts it
 * to the thread, and spreading those posts over turns cost the SQLite service 0.91x the deliveries
 * a second with bodies of 240 KiB, for a loop's delay p99 of 31 ms against 45 (design D76).
 */
export const startBudgetFor = (deliveryThread: boolean): TurnBudget => (deliveryThread ? atOnce : inTurn);
