import { describe, expect, it } from 'vitest';
import { stepTurns } from './step-turns.js';

describe('stepTurns', () => {
  it('runs the steps one at a time in the order asked, each at a turn of the event loop after the last', async () => {
    const turns = stepTurns();
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
    const a = turns.take(step('a'));
    const b = turns.take(step('b', true));
    const c = turns.take(step('c'));
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
});
