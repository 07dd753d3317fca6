import { describe, expect, it } from 'vitest';
import { createAbandon } from './abandon.js';

describe('createAbandon', () => {
  it('runs each listener once, at the abort, in the order they were added', () => {
    const abandon = createAbandon();
    const heard: string[] = [];
    abandon.signal.addEventListener('abort', () => heard.push('client'), { once: true });
    abandon.signal.addEventListener('abort', () => heard.push('thread'));
    expect(abandon.signal.aborted).toBe(false);
    expect(heard).toEqual([]);
    abandon.abort();
    expect(abandon.signal.aborted).toBe(true);
    expect(heard).toEqual(['client', 'thread']);
    abandon.abort();
    expect(heard).toEqual(['client', 'thread']);
  });

  it('never runs a listener removed before the abort, nor one added after it', () => {
    const abandon = createAbandon();
    const heard: string[] = [];
    const removed = () => heard.push('removed');
    abandon.signal.addEventListener('abort', removed);
    abandon.signal.addEventListener('abort', () => heard.push('kept'));
    abandon.signal.removeEventListener('abort', removed);
    abandon.signal.removeEventListener('abort', () => heard.push('never added'));
    abandon.abort();
    abandon.signal.addEventListener('abort', () => heard.push('late'));
    expect(heard).toEqual(['kept']);
  });

  it('behaves as an AbortSignal does for the same calls', () => {
    const runs = (signal: ReturnType<typeof createAbandon>['signal'], abort: () => void) => {
      const heard: number[] = [];
      const first = () => heard.push(1);
      signal.addEventListener('abort', first, { once: true });
      signal.addEventListener('abort', () => heard.push(2), { once: true });
      signal.removeEventListener('abort', first);
      abort();
      abort();
      signal.addEventListener('abort', () => heard.push(3));
      return { heard, aborted: signal.aborted };
    };
    const controller = new AbortController();
    const abandon = createAbandon();
    expect(runs(abandon.signal, () => abandon.abort())).toEqual(
      runs(controller.signal, () => controller.abort()),
    );
  });
});
