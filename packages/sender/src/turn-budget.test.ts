import { expect, it } from 'vitest';
import { atOnce, createTurnBudget, inTurn, parseBudgetFor, startBudgetFor } from './turn-budget.js';

/**
 * Marks which turn of the queue a step ran in: a turn's steps run in one task of the event loop,
 * and the microtask this queues runs once that task ends, never inside it.
 */
function turns() {
  let turn = 0;
  let counting = false;
  return () => {
    if (!counting) {
      counting = true;
      queueMicrotask(() => {
        turn++;
        counting = false;
      });
    }
    return turn;
  };
}

/** A budget of 4 ms on a clock each step moves by `ms`, and the turn marker. */
function stepped() {
  const clock = { now: 0 };
  const inTurn = createTurnBudget(4, () => clock.now);
  return { clock, inTurn, turnOf: turns() };
}

it('runs steps in order, as many in a turn as its budget holds, and the rest in later turns', async () => {
  const { clock, inTurn, turnOf } = stepped();
  // Each step takes 3 ms: a budget of 4 holds two (the second one ends past it).
  const done = await Promise.all(
    Array.from({ length: 5 }, (_, i) =>
      inTurn(() => {
        clock.now += 3;
        return [i, turnOf()];
      }),
    ),
  );
  expect(done).toEqual([
    [0, 0],
    [1, 0],
    [2, 1],
    [3, 1],
    [4, 2],
  ]);
});

it('runs the first step of a turn however long it takes, and its errors reject its own step only', async () => {
  const { clock, inTurn, turnOf } = stepped();
  const long = inTurn(() => {
    clock.now += 100;
    return turnOf();
  });
  const failing = inTurn(() => {
    throw new Error('this step');
  });
  const after = inTurn(() => turnOf());
  expect(await long).toBe(0);
  await expect(failing).rejects.toThrow('this step');
  expect(await after).toBe(1);
});

it('holds steps that give more steps to the same budget, a turn at a time', async () => {
  const { clock, inTurn, turnOf } = stepped();
  const ran: number[] = [];
  // Each step takes 3 ms and gives two more, fifteen in all: a turn of every step given so far would
  // run four, then eight; a budget of 4 holds two.
  const step = (n: number): Promise<unknown> => {
    clock.now += 3;
    ran.push(turnOf());
    const next = [2 * n + 1, 2 * n + 2].filter((m) => m < 15);
    return Promise.all(next.map((m) => inTurn(() => step(m))));
  };
  await inTurn(() => step(0));
  expect(ran).toHaveLength(15);
  const perTurn = new Map<number, number>();
  for (const turn of ran) perTurn.set(turn, (perTurn.get(turn) ?? 0) + 1);
  expect(Math.max(...perTurn.values())).toBe(2);
});

it('runs a step at once where the loop has time to spare, errors as rejections', async () => {
  expect(await atOnce(() => 7)).toBe(7);
  expect(await atOnce(async () => 8)).toBe(8);
  await expect(
    atOnce(() => {
      throw new Error('at once');
    }),
  ).rejects.toThrow('at once');
});

it("parses a single event's large body in the turn's budget on every store, a batch's as its other steps", () => {
  const sqlite = { recordsOverNetwork: false };
  const postgres = { recordsOverNetwork: true };
  expect(parseBudgetFor(sqlite, false)).toBe(inTurn);
  expect(parseBudgetFor(postgres, false)).toBe(inTurn);
  expect(parseBudgetFor(sqlite, true)).toBe(inTurn);
  expect(parseBudgetFor(postgres, true)).toBe(atOnce);
});

it("starts a large body's delivery in the turn's budget where this thread sends it, at once where a thread does", () => {
  expect(startBudgetFor(false)).toBe(inTurn);
  expect(startBudgetFor(true)).toBe(atOnce);
});
