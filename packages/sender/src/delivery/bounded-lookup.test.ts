import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LookupFunction } from './address-guard.js';
import { createBoundedLookup } from './bounded-lookup.js';
import { classifyError } from './failure-kind.js';

type Answer = Parameters<Parameters<LookupFunction>[2]>;

/** A resolver whose lookups answer only when the test says so. */
function manualResolver() {
  const pending: { host: string; answer: (...a: Answer) => void }[] = [];
  const resolve: LookupFunction = (host, _options, callback) => void pending.push({ host, answer: callback });
  return { resolve, pending };
}

function lookUp(lookup: LookupFunction, host: string) {
  return new Promise<{ error: NodeJS.ErrnoException | null; address: unknown }>((done) =>
    lookup(host, {}, (error, address) => done({ error, address })),
  );
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('createBoundedLookup', () => {
  it('fails a lookup that never answers after the deadline, as a dns failure', async () => {
    const { resolve } = manualResolver();
    const result = lookUp(createBoundedLookup(resolve, { timeoutMs: 5_000 }), 'stuck.example');
    await vi.advanceTimersByTimeAsync(5_000);
    const { error } = await result;
    expect(error?.code).toBe('ETIMEOUT');
    expect(error?.message).toContain('stuck.example');
    expect(classifyError(error)).toBe('dns');
  });

  it('runs at most `concurrency` lookups at once; the rest wait, and waiting counts toward the deadline', async () => {
    const { resolve, pending } = manualResolver();
    const lookup = createBoundedLookup(resolve, { timeoutMs: 5_000, concurrency: 2 });
    const results = ['a', 'b', 'c'].map((h) => lookUp(lookup, h));
    expect(pending.map((p) => p.host)).toEqual(['a', 'b']);
    pending[0]!.answer(null, '203.0.113.1', 4);
    expect((await results[0]!).address).toBe('203.0.113.1');
    expect(pending.map((p) => p.host)).toEqual(['a', 'b', 'c']);
    await vi.advanceTimersByTimeAsync(5_000);
    expect((await results[1]!).error?.code).toBe('ETIMEOUT');
    expect((await results[2]!).error?.code).toBe('ETIMEOUT');
  });

  it('fails a lookup whose resolver throws, and frees its turn', async () => {
    let calls = 0;
    const resolve: LookupFunction = (_host, _options, callback) => {
      if (++calls <= 2) throw new Error('resolver broke');
      callback(null, '203.0.113.4', 4);
    };
    const lookup = createBoundedLookup(resolve, { timeoutMs: 5_000, concurrency: 2 });
    expect((await lookUp(lookup, 'a')).error?.message).toBe('resolver broke');
    expect((await lookUp(lookup, 'b')).error?.message).toBe('resolver broke');
    // Both turns free again: the next lookup runs at once, not after the deadline.
    expect((await lookUp(lookup, 'c')).address).toBe('203.0.113.4');
  });

  it('frees its turn only when the resolver answers, even after the caller gave up', async () => {
    const { resolve, pending } = manualResolver();
    const lookup = createBoundedLookup(resolve, { timeoutMs: 1_000, concurrency: 1 });
    const first = lookUp(lookup, 'slow');
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await first).error?.code).toBe('ETIMEOUT');
    const second = lookUp(lookup, 'next');
    expect(pending).toHaveLength(1); // 'slow' still holds the thread
    pending[0]!.answer(null, '203.0.113.2', 4);
    expect(pending.map((p) => p.host)).toEqual(['slow', 'next']);
    pending[1]!.answer(null, '203.0.113.3', 4);
    expect((await second).address).toBe('203.0.113.3');
  });
});
