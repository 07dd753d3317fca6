import { expect, it } from 'vitest';
import { atOnce, createTurnBudget } from './turn-budget.js';

/**
 * Marks which run of the queue a step ran in: steps of one run are one callback of the loop's
 * check phase, and a microtask runs between two callbacks, never inside one.
 */
function runs() {
  let run = 0;
  let counting = false;
  return () => {
    if (!counting) {
      counting = true;
      queueMicrotask(() => {
        run++;
        counting = false;
      });
    }
    return run;
  };
}

it('runs steps in order, as many in a turn as its budget holds, and the rest in later turns', async () => {
  let now = 0;
  const inTurn = createTurnBudget(4, () => now);
  const runOf = runs();
  // Each step takes 3 ms of the stepped clock: a budget of 4 holds two (the second one ends past it).
  const done = await Promise.all(
    Array.from({ length: 5 }, (_, i) =>
      inTurn(() => {
        now += 3;
        return [i, runOf()];
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
  let now = 0;
  const inTurn = createTurnBudget(4, () => now);
  const runOf = runs();
  const long = inTurn(() => {
    now += 100;
    return runOf();
  });
  const failing = inTurn(() => {
    throw new Error('this step');
  });
  const after = inTurn(() => runOf());
  expect(await long).toBe(0);
  await expect(failing).rejects.toThrow('this step');
  expect(await after).toBe(1);
});

it('holds steps given while a turn runs to the same budget', async () => {
  let now = 0;
  const inTurn = createTurnBudget(4, () => now);
  const runOf = runs();
  const inner: Promise<number>[] = [];
  const outer = await inTurn(() => {
    now += 5;
    // Given while the queue runs, past the budget: a later turn.
    inner.push(inTurn(() => runOf()));
    return runOf();
  });
  expect(outer).toBe(0);
  expect(await inner[0]).toBe(1);
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

it('has one turn scheduled at a time, steps that give more steps included', () => {
  let now = 0;
  let turns: (() => void)[] = [];
  const inTurn = createTurnBudget(
    4,
    () => now,
    (run) => turns.push(run),
  );
  const ran: number[] = [];
  let turn = 0;
  // Each step takes 3 ms and gives the next, ten in all: a budget of 4 holds two a turn.
  const step = (n: number) => {
    now += 3;
    ran.push(turn);
    if (n < 9) void inTurn(() => step(n + 1));
  };
  void inTurn(() => step(0));
  void inTurn(() => undefined);
  const perTurn: number[] = [];
  while (turns.length > 0) {
    expect(turns).toHaveLength(1);
    const due = turns;
    turns = [];
    const before = ran.length;
    for (const run of due) run();
    perTurn.push(ran.length - before);
    turn++;
  }
  expect(ran).toHaveLength(10);
  expect(Math.max(...perTurn)).toBeLessThanOrEqual(2);
});
