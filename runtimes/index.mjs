// Each runtime's command inside its package. The packages are built for Linux on x64 only and are
// optional: elsewhere they are not installed, and runtimeBin says so.
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

const COMMANDS = {
  node22: { pkg: 'node22', path: ['bin', 'node'] },
  node24: { pkg: 'node24', path: ['bin', 'node'] },
  bun: { pkg: '@oven/bun-linux-x64', path: ['bin', 'bun'] },
  deno: { pkg: '@deno/linux-x64-glibc', path: ['deno'] },
  workerd: { pkg: '@cloudflare/workerd-linux-64', path: ['bin', 'workerd'] },
};

/** The registry's Node.js builds, those platforms run the service on: Node.js runtimes by name. */
export const NODE_RUNTIMES = Object.freeze(Object.keys(COMMANDS).filter((name) => name.startsWith('node')));

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

const notInstalled = (name) => `${name} is not installed (@linkhooks/runtimes installs it on Linux x64 only)`;

/**
 * The folder where the native part of npm package `pkg` at `version`, built for Node.js runtime
 * `name`, is kept between runs, as npm keeps its downloads: in the user's cache folder, by the
 * package's version and the runtime's exact one (better-sqlite3's compile is about a minute of one
 * core).
 */
export function nativeCacheDir(name, pkg, version) {
  const node = runtimeVersion(name);
  if (!node) throw new Error(notInstalled(name));
  const cache = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(cache, 'linkhooks', 'native', `${pkg}-${version}-node-${node}`);
}

/**
 * The native part `file` (say `better_sqlite3.node`) of the package installed at `packageDir`,
 * built for Node.js runtime `name`: from the cache (nativeCacheDir), or compiled once there by npm
 * as a project on that runtime would (`npm rebuild`, from source, against the runtime's own headers)
 * in a copy of the package, told first to `building` (the file's path). Kept whole or not at all:
 * a build cut short is never found next time.
 */
export function nativeBuild(name, packageDir, file, building = () => {}) {
  const bin = runtimeBin(name);
  if (!bin) throw new Error(notInstalled(name));
  const { name: pkg, version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
  const dir = nativeCacheDir(name, pkg, version);
  const kept = join(dir, file);
  if (existsSync(kept)) return kept;
  building(kept);
  const work = mkdtempSync(join(tmpdir(), 'linkhooks-native-'));
  try {
    const copy = join(work, 'node_modules', pkg);
    // Its sources, not what was built or installed for the workspace's Node.js.
    const skipped = ['build', 'node_modules'].map((d) => join(packageDir, d));
    cpSync(packageDir, copy, {
      recursive: true,
      filter: (from) => !skipped.some((d) => from === d || from.startsWith(`${d}/`)),
    });
    // npm as a reader's shell runs it: none of the settings of a package manager running this one.
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
    const built = join(copy, 'build', 'Release', file);
    try {
      execFileSync('npm', ['rebuild', pkg], {
        cwd: work,
        stdio: ['ignore', 'ignore', 'pipe'],
        env: {
          ...env,
          PATH: `${bin}:${process.env.PATH ?? ''}`,
          npm_config_build_from_source: 'true',
          npm_config_ignore_scripts: 'false',
          npm_config_nodedir: runtimeHome(name),
        },
      });
    } catch (error) {
      const said = String(error.stderr ?? '')
        .trim()
        .split('\n')
        .slice(-20)
        .join('\n');
      throw new Error(`building ${pkg} ${version} for ${name} failed (npm rebuild):\n${said}`);
    }
    if (!existsSync(built)) throw new Error(`npm rebuild ${pkg} for ${name} left no ${built}`);
    mkdirSync(dir, { recursive: true });
    const partial = `${kept}.${process.pid}`;
    cpSync(built, partial);
    renameSync(partial, kept);
    return kept;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * runtimeBin for a test that needs the runtime: where this machine lacks it, a loud notice that
 * `what` is skipped (null), or under CI=true an error.
 */
export function requireRuntime(name, what) {
  const bin = runtimeBin(name);
  if (bin) return bin;
  const message = notInstalled(name);
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
