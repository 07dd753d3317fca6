import { describe, expect, it } from 'vitest';
import { createBatcher, type Settled } from './batcher.js';

const ok = <R>(value: R): Settled<R> => ({ ok: true, value });

describe('createBatcher', () => {
  it('runs the calls made in one turn as one flush, answering each in order', async () => {
    const flushes: number[][] = [];
    const call = createBatcher((items: number[]) => {
      flushes.push(items);
      return items.map((i) => (i === 2 ? { ok: false as const, error: new Error('two') } : ok(i * 10)));
    });
    const results = await Promise.allSettled([call(1), call(2), call(3)]);
    expect(flushes).toEqual([[1, 2, 3]]);
    expect(results).toEqual([
      { status: 'fulfilled', value: 10 },
      { status: 'rejected', reason: new Error('two') },
      { status: 'fulfilled', value: 30 },
    ]);
  });

  it('hands a flush that answered only the first items the rest first, after a turn of the loop', async () => {
    const order: string[] = [];
    const call = createBatcher((items: number[]) => {
      order.push(`flush ${items.join(',')}`);
      // Answers two at most, as a flush out of time does; something else is waiting for a turn.
      setImmediate(() => order.push('other work'));
      return items.slice(0, 2).map(ok);
    });
    const first = [call(1), call(2), call(3), call(4), call(5)];
    expect(await Promise.all(first)).toEqual([1, 2, 3, 4, 5]);
    // The last flush's own waiting work runs after its answers.
    expect(order).toEqual(['flush 1,2,3,4,5', 'other work', 'flush 3,4,5', 'other work', 'flush 5']);
  });

  it('runs a flush at most a turn, however many calls are queued: more than `max` go into later turns', async () => {
    const order: string[] = [];
    const call = createBatcher((items: number[]) => {
      order.push(`flush ${items.join(',')}`);
      setImmediate(() => order.push('other work'));
      return items.map(ok);
    }, 2);
    expect(await Promise.all([call(1), call(2), call(3), call(4), call(5)])).toEqual([1, 2, 3, 4, 5]);
    expect(order).toEqual(['flush 1,2', 'other work', 'flush 3,4', 'other work', 'flush 5']);
  });

  it('rejects the batch when a flush answers none of its items, and goes on with the next', async () => {
    let calls = 0;
    const call = createBatcher((items: number[]) => (calls++ === 0 ? [] : items.map(ok)));
    await expect(call(1)).rejects.toThrow('answered none');
    expect(await call(2)).toBe(2);
  });
});
