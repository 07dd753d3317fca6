// `pnpm start`: installs, builds what changed since its last build, and runs the reference app — the sender service on SQLite with
// its dashboard, a sample HTTPS receiver built on @linkhooks/receiver, and generated traffic.
// Flags after `--` go to the app: `pnpm start -- --rate 5 --time-scale 0.001 --port 3000`.
import { join } from 'node:path';
import { buildIfChanged, install, root, runUntilStopped } from './lib.mjs';

install();
buildIfChanged();
const args = process.argv.slice(2).filter((a) => a !== '--');
// node itself rather than `pnpm exec`, so a start the app refuses ends with its one sentence only.
const status = await runUntilStopped(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
  label: 'reference app (Ctrl-C to stop)',
  cwd: join(root, 'apps', 'reference'),
});
process.exit(status);
