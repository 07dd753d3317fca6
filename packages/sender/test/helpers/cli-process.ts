/** Runs the built `linkhooks-sender` CLI (dist/cli.js) as a user would, and follows its output. */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A command that has not ended by then never will: it is killed and the run fails, naming it. */
const RUN_LIMIT_MS = 120_000;

/** Runs a command to its end, on `node` (this test's Node.js unless given). */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
  node = process.execPath,
): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, [CLI, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const limit = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`linkhooks-sender ${args.join(' ')} did not exit within ${RUN_LIMIT_MS} ms`));
    }, RUN_LIMIT_MS);
    child.once('close', () => clearTimeout(limit));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c;
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c;
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface LogLine {
  msg: string;
  level: number;
  [key: string]: unknown;
}

export interface CliService {
  child: ChildProcess;
  /** Every JSON log line printed so far. */
  logs: LogLine[];
  /** Resolves with the first log line matching, once printed; rejects if the process exits first. */
  logged(match: (line: LogLine) => boolean, what: string): Promise<LogLine>;
  /** SIGTERM, then resolves with the exit code. */
  stop(): Promise<number | null>;
  output(): string;
}

/** Starts a long-running command (`serve`, `worker`), on `node` (this test's Node.js unless given). */
export function startCli(
  args: string[],
  env: Record<string, string> = {},
  node = process.execPath,
): CliService {
  const child = spawn(node, [CLI, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: LogLine[] = [];
  const watchers = new Set<() => void>();
  let raw = '';
  let buffer = '';
  let exitCode: number | null | undefined;
  child.stdout!.on('data', (chunk: Buffer) => {
    raw += chunk;
    buffer += chunk;
    let nl = buffer.indexOf('\n');
    while (nl >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      try {
        logs.push(JSON.parse(line) as LogLine);
      } catch {
        // not a log line
      }
      nl = buffer.indexOf('\n');
    }
    for (const w of watchers) w();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    raw += chunk;
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      exitCode = code;
      for (const w of watchers) w();
      resolve(code);
    }),
  );
  return {
    child,
    logs,
    logged: (match, what) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = logs.find(match);
          if (found) {
            watchers.delete(check);
            resolve(found);
          } else if (exitCode !== undefined) {
            watchers.delete(check);
            reject(new Error(`linkhooks-sender exited (${exitCode}) before ${what}:\n${raw}`));
          }
        };
        watchers.add(check);
        check();
      }),
    async stop() {
      if (exitCode === undefined) child.kill('SIGTERM');
      return exited;
    },
    output: () => raw,
  };
}
