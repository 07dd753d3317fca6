// Shared pieces of the sender benchmark (bench/run.mjs): statistics and formatting, the cleanup
// registry that runs on success, on error and on Ctrl-C, the throwaway test CA, and the forked
// HTTPS receiver.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** This package's folder: a build's dist/ is read from it, wherever the bench runs from. */
export const PACKAGE = fileURLToPath(new URL('..', import.meta.url));
/** The PostgreSQL the benches use: `BENCH_DATABASE_URL`, or the machine's own. */
export const PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The harness itself is broken: the figures would measure something else, so the run exits 1. */
export class HarnessError extends Error {}
export function check(condition, message) {
  if (!condition) throw new HarnessError(message);
}

// ---- statistics and formatting ----------------------------------------------------------------

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
/** Nearest-rank percentile. */
export const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};
/** Median of per-round ratios a[r]/b[r]: rounds share the machine's mood; a cross-check. */
export const pairedRatio = (a, b) => median(a.map((x, r) => x / b[r]));
export const fmtInt = (n) => Math.round(n).toLocaleString('en-US');
/** `lowest – highest` of the samples, as whole numbers. */
export const fmtRange = (xs, fmt = fmtInt) => `${fmt(Math.min(...xs))} – ${fmt(Math.max(...xs))}`;
export const fmtMs = (n) => (n < 10 ? n.toFixed(2) : n.toFixed(1));
export const pad = (s, n) => String(s).padEnd(n);
export const lpad = (s, n) => String(s).padStart(n);
/**
 * The event-loop delay from a monitorEventLoopDelay percentile in ms: the histogram holds the time
 * between two samples, so an idle loop sampled every `sampleMs` reads about `sampleMs`; the delay is
 * what lies beyond it.
 */
export const loopDelayMs = (percentileMs, sampleMs) => Math.max(0, percentileMs - sampleMs);
/** CLOCK_MONOTONIC in ms: one clock for every process on the machine, so the receiver's receipt
 * times and the benchmark's publish times can be subtracted. */
export const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6;
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new HarnessError(`${what} did not finish within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// ---- cleanup ------------------------------------------------------------------------------------

const cleanups = [];
const children = new Set();
const tempDirs = new Set();
let cleaning;

/** Registers an async undo step; they run last-in first-out. */
export function onCleanup(fn) {
  cleanups.push(fn);
}

/** Runs every registered step once, even when some fail. */
export function cleanup() {
  cleaning ??= (async () => {
    while (cleanups.length > 0) {
      const fn = cleanups.pop();
      try {
        await fn();
      } catch (error) {
        console.error(`cleanup step failed: ${error?.message ?? error}`);
      }
    }
    await Promise.all([...children].map(stopChild));
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  })();
  return cleaning;
}

export function tempDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

const exited = (child) => child.exitCode !== null || child.signalCode !== null;

function stopChild(child) {
  if (exited(child)) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 2_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

// Last resort: whatever ends this process, no child and no temp file is left behind.
process.on('exit', () => {
  for (const child of children) if (!exited(child)) child.kill('SIGKILL');
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    console.error(`\n${signal}: cleaning up`);
    cleanup().finally(() => process.exit(130));
  });
}

/** Forks a bench script without the parent's flags (e.g. --cpu-prof) and tracks it for cleanup. */
export function forkTracked(script, args = [], options = {}) {
  const child = fork(fileURLToPath(new URL(script, import.meta.url)), args, {
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    ...options,
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Runs a bench script to completion; resolves with its stdout. */
export function runChild(script, args) {
  const child = forkTracked(script, args, { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  let out = '';
  child.stdout.on('data', (chunk) => {
    out += chunk;
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code === 0) resolve(out);
      else reject(new HarnessError(`${script} ${args.join(' ')} exited with ${code ?? signal}`));
    });
  });
}

// ---- a throwaway CA and a 127.0.0.1 certificate: the tests' own helper ---------------------------

export { createTestCertificates } from '../test/helpers/test-ca.mjs';

// ---- the receiver child (bench/receiver.mjs) ---------------------------------------------------

/**
 * Starts the HTTPS receiver in its own process on `ports` 127.0.0.1 ports. `stats()` returns its
 * request counters and drains the latency receipts it has collected; `reached(n)` resolves with
 * `{ requests, rejected }` once it has had `n` requests in all, or at the first it rejects.
 */
export async function startReceiver(certs, ports) {
  const child = forkTracked('./receiver.mjs');
  const waiting = [];
  const reaching = [];
  let died;
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new HarnessError('the receiver did not start within 10 s')),
      10_000,
    );
    child.on('message', (m) => {
      if (m.type === 'ready') {
        clearTimeout(timer);
        resolve(m.ports);
      } else if (m.type === 'stats') waiting.shift()?.resolve(m);
      else if (m.type === 'reached') reaching.shift()?.resolve(m);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      died = new HarnessError(`the receiver exited (${code ?? signal})`);
      reject(died);
      for (const w of [...waiting.splice(0), ...reaching.splice(0)]) w.reject(died);
    });
  });
  child.send({ type: 'listen', key: certs.key, cert: certs.cert, ports });
  const bound = await ready;
  return {
    origins: bound.map((port) => `https://127.0.0.1:${port}`),
    stats() {
      if (died) return Promise.reject(died);
      return new Promise((resolve, reject) => {
        waiting.push({ resolve, reject });
        child.send({ type: 'stats' });
      });
    },
    reached(requests) {
      if (died) return Promise.reject(died);
      return new Promise((resolve, reject) => {
        reaching.push({ requests, resolve, reject });
        reaching.sort((a, b) => a.requests - b.requests);
        child.send({ type: 'reached', requests });
      });
    },
  };
}
