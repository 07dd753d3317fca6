// Each runtime's command inside its package. The packages are built for Linux on x64 only and are
// optional: elsewhere they are not installed, and runtimeBin says so.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

const COMMANDS = {
  node22: { pkg: 'node22', path: ['bin', 'node'] },
  node24: { pkg: 'node24', path: ['bin', 'node'] },
  bun: { pkg: '@oven/bun-linux-x64', path: ['bin', 'bun'] },
  deno: { pkg: '@deno/linux-x64-glibc', path: ['deno'] },
  workerd: { pkg: '@cloudflare/workerd-linux-64', path: ['bin', 'workerd'] },
};

/** The package folder of runtime `name`, or null where it is not installed. */
export function runtimeHome(name) {
  const command = COMMANDS[name];
  if (!command) throw new Error(`no runtime ${name}: one of ${Object.keys(COMMANDS).join(', ')}`);
  try {
    return dirname(require.resolve(`${command.pkg}/package.json`));
  } catch {
    return null;
  }
}

/**
 * The folder holding runtime `name`'s command (`node`, `bun`, `deno` or `workerd`), to put first on a PATH;
 * null where this machine does not have it.
 */
export function runtimeBin(name) {
  const home = runtimeHome(name);
  if (!home) return null;
  const file = join(home, ...COMMANDS[name].path);
  return existsSync(file) ? dirname(file) : null;
}

/** The command runtime `name` is run with, as a shell finds it on the PATH: node, bun, deno or workerd. */
export const runtimeCommand = (name) => COMMANDS[name].path.at(-1);

/** The version of runtime `name` installed here (its package's: node22 → 22.23.1), or null. */
export function runtimeVersion(name) {
  const home = runtimeHome(name);
  return home && JSON.parse(readFileSync(join(home, 'package.json'), 'utf8')).version;
}

/**
 * runtimeBin for a test that needs the runtime: where this machine lacks it, a loud notice that
 * `what` is skipped (null), or under CI=true an error.
 */
export function requireRuntime(name, what) {
  const bin = runtimeBin(name);
  if (bin) return bin;
  const message = `${name} is not installed (@linkhooks/runtimes installs it on Linux x64 only)`;
  if (process.env.CI === 'true') throw new Error(`${message}: CI needs it.`);
  console.warn(`\n!!! SKIPPING ${what} on ${name}: ${message}.\n`);
  return null;
}
