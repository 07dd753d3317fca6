// `--runtime node22|node24`: a bench script run whole on another Node.js, the one platforms run the
// service on, from @linkhooks/runtimes. Everything it starts runs there too: the service, the
// receiver and the ingest floor take the runtime's own execPath, and the bare loop and the peers run
// in the script itself. better-sqlite3's native part is built for that Node.js once, as npm would
// build it there, and kept in the user's cache folder; sqlite-binding.cjs loads it in place of the
// workspace's in every process and thread of the run.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_RUNTIMES, nativeBuild, runtimeBin, runtimeVersion } from '@linkhooks/runtimes';

const PRELOAD = fileURLToPath(new URL('./sqlite-binding.cjs', import.meta.url));
const SQLITE = dirname(fileURLToPath(import.meta.resolve('better-sqlite3/package.json')));
const ADDON = 'better_sqlite3.node';

const refuse = (message) => {
  console.error(message);
  process.exit(2);
};

/** The runtime `argv` names (`--runtime X` or `--runtime=X`, once at most), and the rest of it. */
function runtimeOf(argv) {
  let runtime;
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = arg === '--runtime' ? argv[++i] : arg.startsWith('--runtime=') ? arg.slice(10) : undefined;
    if (value === undefined) {
      rest.push(arg);
      continue;
    }
    if (runtime !== undefined) refuse('--runtime is given once');
    if (!NODE_RUNTIMES.includes(value)) refuse(`--runtime takes one of ${NODE_RUNTIMES.join(', ')}`);
    runtime = value;
  }
  return { runtime, rest };
}

/**
 * The script's arguments (`argv`) without `--runtime`, once `check` (which exits on arguments the
 * script refuses) has taken them. When they name a runtime, runs `script` (a file URL) again on it
 * with the rest of them instead, and ends this process with its exit code.
 */
export async function onRuntime(script, check, argv = process.argv.slice(2)) {
  const { runtime, rest } = runtimeOf(argv);
  check(rest);
  if (runtime === undefined) return rest;
  let binding;
  try {
    binding = nativeBuild(runtime, SQLITE, ADDON, (path) =>
      console.log(`Building better-sqlite3 for ${runtime} into ${path} (about a minute of one core, once)`),
    );
  } catch (error) {
    refuse(error.message); // not installed here, or the build failed: npm's words
  }
  console.log(`Running on Node.js ${runtimeVersion(runtime)}; better-sqlite3 for it: ${binding}`);
  // A process group of its own: a signal reaches the group once, passed on from here as a terminal
  // would pass it (the CLI commands the run has started included), and this process waits for the
  // run's cleanup (its processes, files and schemas) rather than the harness's handlers ending this
  // one first.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.removeAllListeners(signal);
  const child = spawn(join(runtimeBin(runtime), 'node'), [fileURLToPath(script), ...rest], {
    stdio: 'inherit',
    detached: true,
    env: {
      ...process.env,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${JSON.stringify(PRELOAD)}`.trim(),
      LINKHOOKS_BENCH_SQLITE_BINDING: binding,
    },
  });
  const pass = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // the group has ended
    }
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, pass);
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
