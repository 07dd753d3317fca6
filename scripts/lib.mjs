// Shared by scripts/start.mjs and scripts/test.mjs: run pnpm the way the user invoked it, so the
// two Quick start commands work on a machine with only Node and npm (`npx pnpm@10 ...`).
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The command and arguments that run pnpm with `args` the way the user invoked it. */
function pnpmCommand(args) {
  const execPath = process.env.npm_execpath;
  const viaPnpm = execPath && /pnpm/.test(execPath);
  return viaPnpm
    ? /\.(c?js|mjs)$/.test(execPath)
      ? [process.execPath, [execPath, ...args]]
      : [execPath, args]
    : ['npx', ['--yes', 'pnpm@10', ...args]];
}

export function pnpm(args, options = {}) {
  const [cmd, argv] = pnpmCommand(args);
  return run(cmd, argv, options);
}

/**
 * Runs several pnpm commands at once (`jobs`: `{ args, label }`), each one's output printed whole
 * under its label once it ends, in the order given; resolves, once all have ended, with the first
 * failure's exit code, or 0. For checks that mostly wait (packing, reading files): one after another they took
 * four times as long.
 */
export async function pnpmTogether(jobs) {
  const ended = jobs.map(({ args }) => {
    const [cmd, argv] = pnpmCommand(args);
    const child = spawn(cmd, argv, { cwd: root, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (c) => {
      output += c;
    });
    child.stderr.on('data', (c) => {
      output += c;
    });
    return new Promise((resolve) => {
      child.once('error', (error) => resolve({ status: 1, output: `${output}${error.message}\n` }));
      child.once('close', (code, signal) =>
        resolve({ status: code ?? 128 + (constants.signals[signal] ?? 0), output }),
      );
    });
  });
  let failed = 0;
  for (const [i, { label }] of jobs.entries()) {
    const { status, output } = await ended[i];
    console.log(`\n▶ ${label}`);
    process.stdout.write(output);
    if (status !== 0) {
      console.error(`\n✖ ${label} failed with exit code ${status}`);
      failed ||= status;
    }
  }
  return failed;
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

/** Every file under `dir`, but NOT_SOURCES: where git cannot say which files are sources. */
function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (NOT_SOURCES.has(entry.name)) return [];
    const path = join(dir, entry.name);
    return entry.isDirectory() ? walk(path) : [path];
  });
}

/**
 * The source files under `dir`: those git tracks or would (its ignore rules leave out the builds'
 * output, the protocol's generated JSON Schemas among them), else every file but NOT_SOURCES.
 */
function sourcesOf(dir) {
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: dir,
    encoding: 'utf8',
  });
  if (listed.status !== 0 || listed.error) return walk(dir);
  return listed.stdout
    .split('\0')
    .filter((f) => f !== '')
    .map((f) => join(dir, f))
    .filter((f) => existsSync(f));
}

/** What the packages under `packagesDir` are built from, their sources and `inputs` (the lockfile), as one digest. */
export function buildInputs(packagesDir = join(root, 'packages'), inputs = [join(root, 'pnpm-lock.yaml')]) {
  const hash = createHash('sha256');
  for (const file of sourcesOf(packagesDir).sort()) {
    hash
      .update(`${relative(packagesDir, file)}\0`)
      .update(readFileSync(file))
      .update('\0');
  }
  for (const file of inputs) if (existsSync(file)) hash.update(readFileSync(file));
  return hash.digest('hex');
}

/** Where a package's build says what it was built from: in its output, which every build replaces. */
const STAMP = '.linkhooks-built-from';

/**
 * `pnpm start` builds only when a package's output was not built by it from the packages as they
 * are now (every build, `pnpm build` or `pnpm test`'s, replaces the output and so the stamp): every
 * start built everything (half a minute) though nothing had changed. The digest is taken before the
 * build, so a file changed while it runs is built at the next start.
 */
export function buildIfChanged(
  packagesDir = join(root, 'packages'),
  build = () => pnpm(['build'], { label: 'pnpm build' }),
) {
  const digest = buildInputs(packagesDir);
  const packages = readdirSync(packagesDir)
    .map((name) => join(packagesDir, name))
    .filter((dir) => existsSync(join(dir, 'package.json')));
  const stampOf = (dir) => join(dir, 'dist', STAMP);
  const built = (dir) => existsSync(stampOf(dir)) && readFileSync(stampOf(dir), 'utf8') === digest;
  if (packages.every(built)) {
    console.log('\n▶ pnpm build: skipped, nothing changed since the last build');
    return false;
  }
  build();
  for (const dir of packages) if (existsSync(join(dir, 'dist'))) writeFileSync(stampOf(dir), digest);
  return true;
}
