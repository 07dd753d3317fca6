// `--runtime node22|node24`: a bench script run whole on another Node.js, the one platforms run the
// service on, from @linkhooks/runtimes. Everything it starts runs there too (the service, the
// receiver, the floor and the peers take the runtime's own execPath). better-sqlite3's native part
// is built for that Node.js once, as npm would build it there, and kept in the user's cache folder;
// sqlite-binding.cjs loads it in place of the workspace's in every process and thread of the run.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nativeBuild, nativeCacheDir, runtimeBin, runtimeVersion } from '@linkhooks/runtimes';

const RUNTIMES = ['node22', 'node24'];
const PRELOAD = fileURLToPath(new URL('./sqlite-binding.cjs', import.meta.url));
const SQLITE = dirname(fileURLToPath(import.meta.resolve('better-sqlite3/package.json')));
const ADDON = 'better_sqlite3.node';

/**
 * The script's arguments (`argv`) when they name no runtime. When they do, runs `script` (a file
 * URL) again on that runtime with the rest of them, and ends this process with its exit code.
 */
export async function onRuntime(script, argv = process.argv.slice(2)) {
  const at = argv.indexOf('--runtime');
  if (at === -1) return argv;
  const runtime = argv[at + 1];
  if (!RUNTIMES.includes(runtime)) {
    console.error(`--runtime takes one of ${RUNTIMES.join(', ')}`);
    process.exit(2);
  }
  const bin = runtimeBin(runtime);
  if (!bin) {
    console.error(`${runtime} is not installed (@linkhooks/runtimes installs it on Linux x64 only)`);
    process.exit(2);
  }
  const { version } = JSON.parse(readFileSync(join(SQLITE, 'package.json'), 'utf8'));
  const cached = join(nativeCacheDir(runtime, 'better-sqlite3', version), ADDON);
  const building = existsSync(cached) ? '' : ', building it now (about a minute of one core, once)';
  console.log(`Running on Node.js ${runtimeVersion(runtime)}; better-sqlite3 for it: ${cached}${building}`);
  const binding = nativeBuild(runtime, SQLITE, ADDON);
  const child = spawn(
    join(bin, 'node'),
    [fileURLToPath(script), ...argv.slice(0, at), ...argv.slice(at + 2)],
    {
      stdio: 'inherit',
      env: {
        ...process.env,
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${PRELOAD}`.trim(),
        LINKHOOKS_BENCH_SQLITE_BINDING: binding,
      },
    },
  );
  // Ctrl-C reaches the child too (one process group); a kill of this process is passed on.
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  process.on('SIGINT', () => {});
  const code = await new Promise((resolve) =>
    child.once('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))),
  );
  process.exit(code);
}

/**
 * What a process the bench starts with an environment of its own needs of this one to run on the
 * runtime too: the preload and the build it loads (both unset in a run on the workspace's Node.js).
 */
export function runtimeEnv() {
  const { NODE_OPTIONS, LINKHOOKS_BENCH_SQLITE_BINDING } = process.env;
  return LINKHOOKS_BENCH_SQLITE_BINDING ? { NODE_OPTIONS, LINKHOOKS_BENCH_SQLITE_BINDING } : {};
}
