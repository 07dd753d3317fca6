import { describe, expect, it } from 'vitest';
import { isSenderError } from '../errors.js';
import { createReadTurns } from './read-turns.js';

/** A read that runs until `finish` is called: what started, in order, and how to end each. */
function heldReads() {
  const started: string[] = [];
  const finishers = new Map<string, (fail?: Error) => void>();
  const read = (name: string) => () =>
    new Promise<string>((resolve, reject) => {
      started.push(name);
      finishers.set(name, (fail) => (fail ? reject(fail) : resolve(name)));
    });
  /** Ends `name`'s read and waits until whatever it lets start has started. */
  const finish = async (name: string, fail?: Error) => {
    finishers.get(name)!(fail);
    await settle();
  };
  return { started, read, finish };
}

/** A turn of the event loop: every promise chain the reads started has run by then. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('createReadTurns', () => {
  it("runs at most atOnce, and a waiting account's first read before another account's next", async () => {
    const turns = createReadTurns('statistics requests', 1, 4);
    const { started, read, finish } = heldReads();
    const done = [
      turns.run('acct_a', read('a1')),
      turns.run('acct_a', read('a2')),
      turns.run('acct_a', read('a3')),
      turns.run('acct_b', read('b1')),
    ];
    await settle();
    expect(started).toEqual(['a1']);
    await finish('a1');
    // b1 came after a2 and a3, yet b has none running and has not had a turn.
    expect(started).toEqual(['a1', 'b1']);
    await finish('b1');
    await finish('a2');
    await finish('a3');
    expect(started).toEqual(['a1', 'b1', 'a2', 'a3']);
    expect(await Promise.all(done)).toEqual(['a1', 'a2', 'a3', 'b1']);
  });

  it("refuses an account's read past its share with rate_limited, and takes it again once one ends", async () => {
    const turns = createReadTurns('statistics requests', 2, 3);
    const { started, read, finish } = heldReads();
    const held = ['a1', 'a2', 'a3'].map((name) => turns.run('acct_a', read(name)));
    const refused = await turns.run('acct_a', read('a4')).catch((error: unknown) => error);
    expect(isSenderError(refused) && refused.code).toBe('rate_limited');
    expect(isSenderError(refused) && refused.message).toBe(
      'too many statistics requests for this account at once; try again in 1 s',
    );
    expect(isSenderError(refused) && refused.retryAfterSeconds).toBe(1);
    // Another account is not refused for it, and waits only for a slot.
    const other = turns.run('acct_b', read('b1'));
    await settle();
    expect(started).toEqual(['a1', 'a2']);
    // A read that fails frees its slot as one that answers does.
    const failed = expect(held[0]).rejects.toThrow('the store failed');
    await finish('a1', new Error('the store failed'));
    await failed;
    expect(started).toEqual(['a1', 'a2', 'b1']);
    const again = turns.run('acct_a', read('a5'));
    await finish('a2');
    await finish('b1');
    await finish('a3');
    await finish('a5');
    expect(started).toEqual(['a1', 'a2', 'b1', 'a3', 'a5']);
    expect(await Promise.all([held[1], held[2], other, again])).toEqual(['a2', 'a3', 'b1', 'a5']);
  });

  it('puts an account that comes back after the ones that waited since before it came', async () => {
    const turns = createReadTurns('statistics requests', 1, 4);
    const { started, read, finish } = heldReads();
    const done = [turns.run('acct_b', read('b1')), turns.run('acct_b', read('b2'))];
    done.push(turns.run('acct_c', read('c1')), turns.run('acct_c', read('c2')));
    await settle();
    await finish('b1');
    // A comes (back, as an account with nothing running or waiting) while c1 runs: b2 has waited
    // since b1 started, before A came, and goes first; A then goes before C's next.
    done.push(turns.run('acct_a', read('a1')));
    await finish('c1');
    await finish('b2');
    await finish('a1');
    await finish('c2');
    expect(started).toEqual(['b1', 'c1', 'b2', 'a1', 'c2']);
    await Promise.all(done);
  });
});
