/**
 * What the docs' tests need from the machine. Off CI a missing tool skips its test with a loud
 * notice; under CI=true it is a failure (.ci/run installs Debian's packages; the workspace's
 * install brings the runtimes).
 */
import { type ChildProcess, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { expect } from 'vitest';

export function hasTool(command: string, versionArg = '--version'): boolean {
  const found = spawnSync(command, [versionArg], { stdio: 'ignore' });
  if (!found.error && found.status === 0) return true;
  const message = `${command} is not installed`;
  if (process.env.CI === 'true')
    throw new Error(`${message}: CI needs it (.ci/run installs it with apt-get).`);
  console.warn(`\n!!! SKIPPING the ${command} checks: ${message}. Install it to run them.\n`);
  return false;
}

/**
 * A port free on every address right now, for a server a test starts. It is taken outside the range
 * the kernel hands to outgoing connections: a server started seconds later (after an npm install's
 * hundreds of connections, say) would otherwise find its port held by one of them. Where that range
 * leaves no room, the kernel picks one.
 */
export async function freePort(): Promise<number> {
  const [from, to] = portsOutsideOutgoing();
  for (let tries = 0; tries < 100 && from < to; tries++) {
    const port = from + Math.floor(Math.random() * (to - from));
    if (await listenable(port)) return port;
  }
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

/**
 * Ports the kernel never gives an outgoing connection, as [from, to): below its range, or above it
 * when it starts too low to leave room; Linux's default range where it cannot be read.
 */
function portsOutsideOutgoing(): [number, number] {
  let [low, high] = [32_768, 60_999];
  try {
    [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number) as [number, number];
  } catch {
    // not Linux: its default is as good a guess as any
  }
  const [from, to] = low >= 11_000 ? [10_000, low] : [high + 1, 65_536];
  // Each vitest worker takes a share of its own (VITEST_POOL_ID, 1 to maxWorkers): a file running in
  // another worker picks ports too, and one probed free here could be bound there before the server
  // this one starts after an npm install binds it.
  const pool = Number(process.env.VITEST_POOL_ID);
  if (!Number.isInteger(pool) || pool < 1) return [from, to];
  const share = Math.floor((to - from) / POOL_SHARES);
  const start = from + ((pool - 1) % POOL_SHARES) * share;
  return [start, start + share];
}

/** The shares the range is cut into, one for each worker up to this many. */
const POOL_SHARES = 8;

/** Whether a server could listen on `port` on every address, as one started without a host does. */
function listenable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

/**
 * Resolves once what `child` printed (`read()`, collected by listeners added before this call)
 * holds `wanted` (a pattern, or a piece of text), checked as each chunk arrives; fails with its
 * output if its output ends first (it stopped) or after `ms`.
 */
export function printedUntil(
  child: ChildProcess,
  read: () => string,
  wanted: RegExp | string,
  what: string,
  ms = 15_000,
): Promise<void> {
  const found = () => (typeof wanted === 'string' ? read().includes(wanted) : wanted.test(read()));
  if (found()) return Promise.resolve();
  const streams = [child.stdout!, child.stderr!];
  // Its output ended before this wait began: no 'close' is to come.
  if (streams.every((stream) => stream.readableEnded))
    return Promise.reject(new Error(`${what}: it had stopped, with no ${wanted} in:\n${read()}`));
  return new Promise<void>((resolve, reject) => {
    const done = (error?: Error) => {
      clearTimeout(timer);
      for (const stream of streams) stream.off('data', check);
      child.off('close', closed);
      if (error) reject(error);
      else resolve();
    };
    // The listeners that collect the output were added first, so `read()` holds this chunk already.
    const check = () => found() && done();
    const closed = () => done(new Error(`${what}: it stopped, with no ${wanted} in:\n${read()}`));
    const timer = setTimeout(() => done(new Error(`${what}: no ${wanted} in:\n${read()}`)), ms);
    for (const stream of streams) stream.on('data', check);
    child.once('close', closed);
  });
}

/** Runs an example program (`command` with its file) on `args`, Go building in `dir`. */
export function runProgram(command: string[], args: string[], dir: string) {
  const [cmd, ...rest] = command;
  return spawnSync(cmd!, [...rest, ...args], {
    encoding: 'utf8',
    env: { ...process.env, GOCACHE: join(dir, 'gocache'), GOPATH: join(dir, 'gopath'), GOFLAGS: '-mod=mod' },
    timeout: 120_000,
  });
}

/**
 * What a program that printed `expected` must have done: nothing on stderr (but `go run`'s line
 * saying how its program exited), and exit 0 for `valid`, 1 for `invalid`.
 */
export function expectVerdict(run: ReturnType<typeof runProgram>, expected: 'valid' | 'invalid') {
  expect(run.stderr.replace(/^exit status \d+\n$/, '')).toBe('');
  expect(run.stdout.trim()).toBe(expected);
  expect(run.status).toBe(expected === 'valid' ? 0 : 1);
}

/** A program run with an argument missing: it says how to run it, prints nothing else, and fails. */
export function expectUsage(run: ReturnType<typeof runProgram>) {
  expect(run.stderr).toMatch(/^usage: /);
  expect(run.stdout).toBe('');
  expect(run.status).not.toBe(0);
}
