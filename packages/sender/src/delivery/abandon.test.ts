import { describe, expect, it } from 'vitest';
import { type AbandonSignal, createAbandon } from './abandon.js';

/** What a signal's listeners did over one sequence of calls, aborted by `abort`. */
function heardOver(signal: AbandonSignal, abort: () => void) {
  const heard: string[] = [];
  const once = () => heard.push('once');
  const twice = () => heard.push('twice');
  const removedEarly = () => heard.push('removed early');
  const removedWhileRunning = () => heard.push('removed while running');
  signal.addEventListener('abort', once, { once: true });
  signal.addEventListener('abort', twice);
  signal.addEventListener('abort', twice);
  signal.addEventListener('abort', removedEarly);
  signal.addEventListener('abort', () => {
    heard.push('removes one');
    signal.removeEventListener('abort', removedWhileRunning);
  });
  signal.addEventListener('abort', removedWhileRunning);
  signal.addEventListener('abort', () => {
    heard.push('adds one');
    signal.addEventListener('abort', () => heard.push('added while running'));
  });
  signal.removeEventListener('abort', removedEarly);
  signal.removeEventListener('abort', () => heard.push('never added'));
  const before = signal.aborted;
  abort();
  abort();
  signal.addEventListener('abort', () => heard.push('added after'));
  return { before, after: signal.aborted, heard };
}

describe('createAbandon', () => {
  it('runs each listener once at the abort, in order, as an AbortSignal does', () => {
    const abandon = createAbandon();
    const controller = new AbortController();
    const ours = heardOver(abandon.signal, () => abandon.abort());
    expect(ours).toEqual({
      before: false,
      after: true,
      heard: ['once', 'twice', 'removes one', 'adds one'],
    });
    expect(ours).toEqual(heardOver(controller.signal, () => controller.abort()));
  });

  it('runs the other listeners when one throws, and throws its error later', async () => {
    const abandon = createAbandon();
    const heard: string[] = [];
    const failure = new Error('a listener failed');
    abandon.signal.addEventListener('abort', () => {
      throw failure;
    });
    abandon.signal.addEventListener('abort', () => heard.push('after the throw'));
    // The runner's own handlers are set aside while the error is awaited, and put back however the
    // test ends, so a failure here cannot leave later uncaught errors unreported.
    const runners = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException');
    try {
      const thrown = new Promise<unknown>((resolve) => process.once('uncaughtException', resolve));
      expect(() => abandon.abort()).not.toThrow();
      expect(heard).toEqual(['after the throw']);
      expect(await thrown).toBe(failure);
    } finally {
      process.removeAllListeners('uncaughtException');
      for (const runner of runners) process.on('uncaughtException', runner);
    }
  });
});
