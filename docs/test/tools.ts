/**
 * What the docs' tests need from the machine. Off CI a missing tool skips its test with a loud
 * notice; under CI=true it is a failure (.ci/run installs them from Debian's packages).
 */
import { spawnSync } from 'node:child_process';

export function hasTool(command: string, versionArg = '--version'): boolean {
  const found = spawnSync(command, [versionArg], { stdio: 'ignore' });
  if (!found.error && found.status === 0) return true;
  const message = `${command} is not installed`;
  if (process.env.CI === 'true')
    throw new Error(`${message}: CI needs it (.ci/run installs it with apt-get).`);
  console.warn(`\n!!! SKIPPING the ${command} checks: ${message}. Install it to run them.\n`);
  return false;
}
