/**
 * Name resolution for deliveries with a deadline and a share of the thread pool. `dns.lookup`
 * runs on libuv's thread pool (four threads by default, shared with file and crypto work), has no
 * time-out of its own, and a resolver that never answers holds its thread until the system gives
 * up. Here at most `concurrency` lookups run at once (the rest wait their turn), and every lookup,
 * waiting included, fails with code `ETIMEOUT` (a `dns` failure) after `timeoutMs`.
 */
import type { LookupFunction } from './address-guard.js';

export const LOOKUP_TIMEOUT_MS = 5_000;
export const LOOKUP_CONCURRENCY = 2;

export class LookupTimeoutError extends Error {
  readonly code = 'ETIMEOUT';
  constructor(hostname: string, timeoutMs: number) {
    super(`looking up ${hostname} took longer than ${timeoutMs} ms`);
    this.name = 'LookupTimeoutError';
  }
}

export function createBoundedLookup(
  resolve: LookupFunction,
  { timeoutMs = LOOKUP_TIMEOUT_MS, concurrency = LOOKUP_CONCURRENCY } = {},
): LookupFunction {
  let running = 0;
  const waiting: (() => void)[] = [];
  const next = () => {
    running--;
    waiting.shift()?.();
  };
  return (hostname, options, callback) => {
    let settled = false;
    let started = false;
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      if (!started) waiting.splice(waiting.indexOf(run), 1);
      callback(
        new LookupTimeoutError(hostname, timeoutMs) as NodeJS.ErrnoException,
        options.all ? [] : '',
        4,
      );
    }, timeoutMs);
    function run() {
      started = true;
      running++;
      const answered: Parameters<LookupFunction>[2] = (error, address, family) => {
        // The thread is free again only now, whether or not the caller still waits.
        next();
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        callback(error, address, family);
      };
      try {
        resolve(hostname, options, answered);
      } catch (error) {
        // A resolver that throws answers nothing: its turn is freed and the lookup fails now.
        answered(error as NodeJS.ErrnoException, options.all ? [] : '', 4);
      }
    }
    if (running < concurrency) run();
    else waiting.push(run);
  };
}
