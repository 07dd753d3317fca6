/** Chromium comes from Debian's package; off CI a missing one skips loudly, under CI it fails. */
import { spawnSync } from 'node:child_process';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function hasChromium(): boolean {
  const found = spawnSync(CHROMIUM, ['--version'], { stdio: 'ignore' });
  if (!found.error && found.status === 0) return true;
  if (process.env.CI === 'true')
    throw new Error(`${CHROMIUM} is missing: CI needs it (.ci/run installs it).`);
  console.warn(`\n!!! SKIPPING the dashboard's browser tests: ${CHROMIUM} is not installed.\n`);
  return false;
}
