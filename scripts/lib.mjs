// Shared by scripts/start.mjs and scripts/test.mjs: run pnpm the way the user invoked it, so the
// two Quick start commands work on a machine with only Node and npm (`npx pnpm@10 ...`).
import { spawnSync } from 'node:child_process';
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

/** Installs exactly what the lockfile says (the first step of both Quick start commands). */
export function install() {
  pnpm(['install', '--frozen-lockfile', '--prefer-offline'], { label: 'pnpm install --frozen-lockfile' });
}
