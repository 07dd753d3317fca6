/**
 * The reference app's command line in a child process, as `pnpm start` runs it: output is collected,
 * and the test waits on what the app prints or on its exit, never on a fixed time.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const APP_DIR = fileURLToPath(new URL('..', import.meta.url));

export interface CliRun {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the first match of `pattern` in stdout; rejects if the app exits first. */
  waitFor(pattern: RegExp): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<ChildProcess>();

export function runCli(args: string[]): CliRun {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: APP_DIR,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let out = '';
  let err = '';
  let closed = false;
  const watchers = new Set<() => void>();
  child.stdout?.on('data', (chunk) => {
    out += chunk;
    for (const check of watchers) check();
  });
  child.stderr?.on('data', (chunk) => {
    err += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => {
      closed = true;
      running.delete(child);
      resolve({ code, signal });
      for (const check of watchers) check();
    });
  });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(pattern) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = out.match(pattern);
          if (match) {
            watchers.delete(check);
            resolve(match);
          } else if (closed) {
            watchers.delete(check);
            reject(new Error(`the app exited before printing ${pattern}:\n${out}\n${err}`));
          }
        };
        watchers.add(check);
        check();
      });
    },
  };
}

/** The banner's service URL, API key and endpoint, once the app printed it. */
export async function started(run: CliRun) {
  const [, serviceUrl] = await run.waitFor(/management API +(http:\/\/127\.0\.0\.1:\d+)\/v1/);
  const [, apiKey] = await run.waitFor(/^ +API key +(\S+)$/m);
  const [, endpointId] = await run.waitFor(/endpoint +(ep_\w+),/);
  return { serviceUrl: serviceUrl!, apiKey: apiKey!, endpointId: endpointId! };
}

/** Kills whatever a test left running, so no process outlives its test. */
export async function killLeftovers(): Promise<number> {
  const left = [...running];
  await Promise.all(
    left.map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('close', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
  return left.length;
}
