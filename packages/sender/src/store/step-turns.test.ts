import { describe, expect, it } from 'vitest';
import { inSteps } from './prune-steps.js';
import { stepTurns } from './step-turns.js';

/** A turn of the event loop: every promise chain started before has run by then. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('stepTurns', () => {
  it('runs the steps one at a time in the order asked, each at a turn of the event loop after the last', async () => {
    const turns = stepTurns(1);
    const log: string[] = [];
    let turned = false;
    const step =
      (name: string, fail = false) =>
      async () => {
        log.push(`${name} ${turned ? 'after a turn' : 'in the same turn'}`);
        turned = false;
        setImmediate(() => {
          turned = true;
        });
        await Promise.resolve();
        log.push(`${name} ended`);
        if (fail) throw new Error(`${name} failed`);
        return name;
      };
    turned = true;
    const a = turns.take('acct_a', step('a'));
    const b = turns.take('acct_a', step('b', true));
    const c = turns.take('acct_a', step('c'));
    // Nothing runs in the caller's turn.
    expect(log).toEqual([]);
    expect(await a).toBe('a');
    await expect(b).rejects.toThrow('b failed');
    // A step that failed does not hold back the next.
    expect(await c).toBe('c');
    expect(log).toEqual([
      'a after a turn',
      'a ended',
      'b after a turn',
      'b ended',
      'c after a turn',
      'c ended',
    ]);
  });

  it('starts no more than atOnce, however many turns a step takes, and the next once one ends', async () => {
    const turns = stepTurns(2);
    const started: string[] = [];
    const ends = new Map<string, () => void>();
    const held = (name: string) => () =>
      new Promise<string>((resolve) => {
        started.push(name);
        ends.set(name, () => resolve(name));
      });
    const all = ['a', 'b', 'c', 'd'].map((name) => turns.take('acct_a', held(name)));
    for (let i = 0; i < 5; i++) await settle();
    expect(started).toEqual(['a', 'b']);
    ends.get('b')!();
    for (let i = 0; i < 5; i++) await settle();
    expect(started).toEqual(['a', 'b', 'c']);
    ends.get('a')!();
    for (let i = 0; i < 5; i++) await settle();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    ends.get('c')!();
    ends.get('d')!();
    expect(await Promise.all(all)).toEqual(['a', 'b', 'c', 'd']);
  });

  it("leaves a waiting loop's step out when the loop is stopped before its turn", async () => {
    const turns = stepTurns(1);
    let stopped = false;
    let release = () => {};
    const asked: string[] = [];
    // The first loop's step holds the only turn; the second loop waits behind it.
    const first = inSteps(
      () =>
        new Promise<number>((resolve) => {
          asked.push('first');
          release = () => resolve(0);
        }),
      1,
      () => stopped,
      (step) => turns.take('acct_a', step),
    );
    const second = inSteps(
      () => {
        asked.push('second');
        return 0;
      },
      1,
      () => stopped,
      (step) => turns.take('acct_a', step),
    );
    for (let i = 0; i < 3; i++) await settle();
    expect(asked).toEqual(['first']);
    stopped = true;
    release();
    expect(await Promise.all([first, second])).toEqual([0, 0]);
    expect(asked).toEqual(['first']);
  });
});
