// Shared by scripts/start.mjs and scripts/test.mjs: run pnpm the way the user invoked it, so the
// two Quick start commands work on a machine with only Node and npm (`npx pnpm@10 ...`).
import { spawn, spawnSync } from 'node:child_process';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';
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
