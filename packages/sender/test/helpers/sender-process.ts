/** Runs test/fixtures/sender-process.mjs as a real child process and follows what it prints. */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../fixtures/sender-process.mjs', import.meta.url));

export interface SenderProcess {
  child: ChildProcess;
  /** Burst indices whose publish returned (durable) in this process. */
  published: Set<number>;
  /** Resolves once the process printed `line`, or rejects if it exits first. */
  printed(line: string): Promise<void>;
  /** Resolves once `count` publishes returned. */
  publishedAtLeast(count: number): Promise<void>;
  kill(signal: NodeJS.Signals): Promise<void>;
}

export function startSenderProcess(env: Record<string, string>): SenderProcess {
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const published = new Set<number>();
  const lines: string[] = [];
  const watchers = new Set<() => void>();
  let stderr = '';
  let exited = false;
  let buffer = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let nl = buffer.indexOf('\n');
    while (nl >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      lines.push(line);
      const m = /^published (\d+) /.exec(line);
      if (m) published.add(Number(m[1]));
      nl = buffer.indexOf('\n');
    }
    for (const w of watchers) w();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      for (const w of watchers) w();
      resolve();
    }),
  );
  const when = (done: () => boolean, what: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (done()) {
          watchers.delete(check);
          resolve();
        } else if (exited) {
          watchers.delete(check);
          reject(new Error(`sender process exited before ${what}:\n${stderr}`));
        }
      };
      watchers.add(check);
      check();
    });
  return {
    child,
    published,
    printed: (line) => when(() => lines.includes(line), `printing "${line}"`),
    publishedAtLeast: (count) => when(() => published.size >= count, `publishing ${count} events`),
    async kill(signal) {
      if (!exited) child.kill(signal);
      await exit;
    },
  };
}
