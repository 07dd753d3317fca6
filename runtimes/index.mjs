// Each runtime's command inside its package. The packages are built for Linux on x64 only and are
// optional: elsewhere they are not installed, and runtimeBin says so.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
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

/**
 * Whether a process of group `pgid` still runs. A zombie does not: it has exited and only waits for
 * its parent, or init (here about once a second), to collect it. Without /proc (not Linux), any
 * process of the group counts, zombies too.
 */
export function groupRunning(pgid) {
  if (!existsSync('/proc/self/stat')) {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  }
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // ended while listed
    }
    // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so read past the last ')'.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z') return true;
  }
  return false;
}
