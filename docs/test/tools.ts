/**
 * What the docs' tests need from the machine. Off CI a missing tool skips its test with a loud
 * notice; under CI=true it is a failure (.ci/run installs Debian's packages; the workspace's
 * install brings the runtimes).
 */
import { spawnSync } from 'node:child_process';
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
