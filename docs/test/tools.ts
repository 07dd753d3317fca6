/**
 * What the docs' tests need from the machine. Off CI a missing tool skips its test with a loud
 * notice; under CI=true it is a failure (.ci/run installs Debian's packages; the workspace's
 * install brings the runtimes).
 */
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { type Runtime, runtimeBin } from '@linkhooks/runtimes';

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
 * The folder of `runtime`'s command (@linkhooks/runtimes), to put first on a reader's PATH; off CI
 * a missing one skips `what` with a loud notice (null), under CI=true it is a failure.
 */
/** What `<command> --version` prints on each runtime: a run checks it got the one it asked for. */
export const RUNTIME_VERSION: Record<Runtime, RegExp> = {
  node22: /^v22\./,
  node24: /^v24\./,
  deno: /^deno 2\./,
  bun: /^1\./,
  workerd: /^workerd 20\d\d-\d\d-\d\d/,
};

/** The command a runtime's folder holds. */
export const runtimeCommand = (runtime: Runtime) => (runtime.startsWith('node') ? 'node' : runtime);

export function runtimeOnPath(runtime: Runtime, what: string): string | null {
  const bin = runtimeBin(runtime);
  if (bin) return bin;
  const message = `${runtime} is not installed (@linkhooks/runtimes installs it on Linux x64 only)`;
  if (process.env.CI === 'true') throw new Error(`${message}: CI needs it.`);
  console.warn(`\n!!! SKIPPING ${what} on ${runtime}: ${message}.\n`);
  return null;
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
