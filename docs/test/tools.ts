/**
 * What the docs' tests need from the machine. Off CI a missing tool skips its test with a loud
 * notice; under CI=true it is a failure (.ci/run installs Debian's packages; the workspace's
 * install brings the runtimes).
 */
import { type ChildProcess, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';

export function hasTool(command: string, versionArg = '--version'): boolean {
  const found = spawnSync(command, [versionArg], { stdio: 'ignore' });
  if (!found.error && found.status === 0) return true;
  const message = `${command} is not installed`;
  if (process.env.CI === 'true')
    throw new Error(`${message}: CI needs it (.ci/run installs it with apt-get).`);
  console.warn(`\n!!! SKIPPING the ${command} checks: ${message}. Install it to run them.\n`);
  return false;
}

/** A port free on 127.0.0.1 right now, for a server a test starts. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.once('error', reject);
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
