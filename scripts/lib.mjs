// Shared by scripts/start.mjs and scripts/test.mjs: run pnpm the way the user invoked it, so the
// two Quick start commands work on a machine with only Node and npm (`npx pnpm@10 ...`).
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export function pnpm(args, options = {}) {
  const execPath = process.env.npm_execpath;
  const viaPnpm = execPath && /pnpm/.test(execPath);
  const [cmd, argv] = viaPnpm
    ? /\.(c?js|mjs)$/.test(execPath)
      ? [process.execPath, [execPath, ...args]]
      : [execPath, args]
    : ['npx', ['--yes', 'pnpm@10', ...args]];
  return run(cmd, argv, options);
}

export function run(cmd, args, options = {}) {
  const label = options.label ?? [cmd === process.execPath ? 'node' : cmd, ...args].join(' ');
  console.log(`\n▶ ${label}`);
  const result = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: process.env, ...options });
  if (result.error) throw result.error;
  if (result.status !== 0 && !options.allowFailure) {
    console.error(`\n✖ ${label} failed with exit code ${result.status}`);
    process.exit(result.status ?? 1);
  }
  return result.status;
}

/**
 * Runs a long-lived command, passing on the signals that stop it: a process manager or `kill`
 * stops the wrapper (SIGTERM, SIGHUP), not the whole group, and with spawnSync the command went on
 * running, its ports and lock held. Ctrl-C reaches the whole group already: the wrapper only waits
 * for the command then. Resolves with its exit code (128 + the signal's number if a signal ended it).
 */
export function runUntilStopped(cmd, args, options = {}) {
  console.log(`\n▶ ${options.label ?? [cmd, ...args].join(' ')}`);
  const child = spawn(cmd, args, { cwd: root, stdio: 'inherit', env: process.env, ...options });
  const pass = (signal) => child.kill(signal);
  const wait = () => {};
  process.on('SIGTERM', pass).on('SIGHUP', pass).on('SIGINT', wait);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      process.off('SIGTERM', pass).off('SIGHUP', pass).off('SIGINT', wait);
      resolve(code ?? 128 + (constants.signals[signal] ?? 0));
    });
  });
}

/** Installs exactly what the lockfile says (the first step of both Quick start commands). */
export function install() {
  pnpm(['install', '--frozen-lockfile', '--prefer-offline'], { label: 'pnpm install --frozen-lockfile' });
}

/** What a package's build never reads: its output and what installs put beside it. */
const NOT_SOURCES = new Set(['dist', 'node_modules', '.turbo', 'coverage']);

function addFiles(hash, dir, base) {
  const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const entry of entries) {
    if (NOT_SOURCES.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) addFiles(hash, path, base);
    else
      hash
        .update(`${relative(base, path)}\0`)
        .update(readFileSync(path))
        .update('\0');
  }
}

/**
 * What the packages under `packagesDir` are built from, their files and `inputs` (the lockfile), as
 * one digest: by content, so a file written again the same (the protocol's JSON Schemas, which its
 * build writes beside its output) changes nothing.
 */
export function buildInputs(packagesDir = join(root, 'packages'), inputs = [join(root, 'pnpm-lock.yaml')]) {
  const hash = createHash('sha256');
  addFiles(hash, packagesDir, packagesDir);
  for (const file of inputs) if (existsSync(file)) hash.update(readFileSync(file));
  return hash.digest('hex');
}

/** Where `pnpm start` keeps the digest of what it last built. */
export const BUILT_STAMP = join(root, 'node_modules', '.linkhooks-built');

/**
 * `pnpm start` builds only when the packages changed since its last build, or one has no output:
 * every start built everything (half a minute) though nothing had changed.
 */
export function buildIfChanged(
  packagesDir = join(root, 'packages'),
  stamp = BUILT_STAMP,
  build = () => pnpm(['build'], { label: 'pnpm build' }),
) {
  const digest = buildInputs(packagesDir);
  const unbuilt = readdirSync(packagesDir).some(
    (name) =>
      existsSync(join(packagesDir, name, 'package.json')) && !existsSync(join(packagesDir, name, 'dist')),
  );
  if (!unbuilt && existsSync(stamp) && readFileSync(stamp, 'utf8') === digest) {
    console.log('\n▶ pnpm build: skipped, nothing changed since the last build');
    return false;
  }
  build();
  // Read again: a build that writes beside its output (the JSON Schemas) adds to what it reads.
  writeFileSync(stamp, buildInputs(packagesDir));
  return true;
}
