import { describe, expect, it } from 'vitest';
import { turnsByAccount, whoseTurn } from './turns-by-account.js';

// The order of turns through a composed user: read-turns.test.ts and store/step-turns.test.ts.
describe('whoseTurn', () => {
  it('takes the account with the fewest running, then the one that started one least lately', () => {
    expect(
      whoseTurn([
        ['a', { running: 1, startedAt: 1 }],
        ['b', { running: 0, startedAt: 5 }],
        ['c', { running: 0, startedAt: 3 }],
      ]),
    ).toBe('c');
    expect(whoseTurn([['a', { running: 2, startedAt: 0 }]])).toBe('a');
    expect(whoseTurn([])).toBeUndefined();
  });
});

describe('turnsByAccount', () => {
  it("counts an account's work running and waiting, and none once it has ended", async () => {
    const turns = turnsByAccount(1);
    let end = () => {};
    const running = turns.take('acct_a', () => new Promise<string>((resolve) => (end = () => resolve('a1'))));
    const waiting = turns.take('acct_a', () => 'a2');
    const other = turns.take('acct_b', () => 'b1');
    expect([turns.held('acct_a'), turns.held('acct_b'), turns.held('acct_c')]).toEqual([2, 1, 0]);
    // The first work starts at a later microtask than it was asked in.
    await new Promise<void>((resolve) => setImmediate(resolve));
    end();
    expect(await Promise.all([running, waiting, other])).toEqual(['a1', 'a2', 'b1']);
    expect([turns.held('acct_a'), turns.held('acct_b')]).toEqual([0, 0]);
  });
});
