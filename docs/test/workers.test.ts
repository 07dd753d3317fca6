/**
 * The Workers example on workerd, the runtime Cloudflare Workers run on (the registry's build, from
 * @linkhooks/runtimes): the file bundled as Wrangler bundles it (esbuild, the `workerd` and `worker`
 * export conditions, browser platform) from the built packages, served by `workerd serve` with the
 * secret as a text binding and no `nodejs_compat`, so `node:crypto` and `process` do not exist and
 * verification must run on Web Crypto. A signed click is handled (the worker's log says so), a
 * forged one is refused and not handled.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { buildEvent, generateSecret, signedRequest } from '@linkhooks/receiver/testing';
import { requireRuntime } from '@linkhooks/runtimes';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printedUntil } from './tools.js';

const EXAMPLE = fileURLToPath(new URL('../examples/cloudflare-worker.ts', import.meta.url));
const SECRET = generateSecret();
const bin = requireRuntime('workerd', 'the Workers example');

/**
 * The port workerd listens on, as it reports it on its control descriptor (`--control-fd`, one
 * JSON line per socket when it is ready); a rejection with what it printed if it exits first or has
 * not reported within 30 s.
 */
function listening(worker: ChildProcess, printed: () => string): Promise<number> {
  return new Promise((resolve, reject) => {
    const control = worker.stdio[3] as Readable;
    const done = (port: number | null, why = '') => {
      clearTimeout(timer);
      worker.off('exit', exited);
      control.off('data', read);
      if (port === null) reject(new Error(`workerd ${why}:\n${printed()}`));
      else resolve(port);
    };
    const exited = (code: number | null) => done(null, `exited (${code})`);
    const timer = setTimeout(() => done(null, 'did not report a listening socket within 30 s'), 30_000);
    let pending = '';
    const read = (chunk: Buffer) => {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        let message: { event?: string; socket?: string; port?: number };
        try {
          message = JSON.parse(line);
        } catch {
          return done(null, `wrote a control message that is not JSON: ${line}`);
        }
        if (message.event === 'listen' && message.socket === 'http' && message.port)
          return done(message.port);
      }
    };
    worker.once('exit', exited);
    control.on('data', read);
  });
}

describe.skipIf(bin === null)('the Workers example on workerd', () => {
  let dir = '';
  let worker: ChildProcess | undefined;
  let printed = '';
  let origin = '';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'linkhooks-workerd-'));
    await build({
      entryPoints: [EXAMPLE],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      conditions: ['workerd', 'worker', 'browser'],
      outfile: join(dir, 'worker.js'),
      logLevel: 'silent',
    });
    writeFileSync(
      join(dir, 'config.capnp'),
      `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .worker)],
  sockets = [(name = "http", address = "127.0.0.1:0", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [(name = "worker", esModule = embed "worker.js")],
  compatibilityDate = "2025-01-01",
  bindings = [(name = "LINKHOOKS_SECRET", text = "${SECRET}")],
);
`,
    );
    // Port 0, and the port it took read from its control descriptor: nothing polls for it.
    worker = spawn(join(bin!, 'workerd'), ['serve', 'config.capnp', '--verbose', '--control-fd', '3'], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    worker.stdout!.on('data', (chunk) => {
      printed += chunk;
    });
    worker.stderr!.on('data', (chunk) => {
      printed += chunk;
    });
    const port = await listening(worker, () => printed);
    origin = `http://127.0.0.1:${port}`;
  }, 60_000);

  afterAll(async () => {
    if (worker && worker.exitCode === null) {
      const exited = new Promise((resolve) => worker!.once('exit', resolve));
      worker.kill('SIGTERM');
      await exited;
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Resolves once the worker's output has `line`, told by the output itself; fails after 10 s. */
  const logged = (line: string) =>
    printedUntil(worker!, () => printed, line, 'the worker did not log it', 10_000);

  it('handles a signed click, with the secret from its binding', async () => {
    const event = buildEvent('click');
    const answer = await fetch(await signedRequest(`${origin}/`, { secret: SECRET, event }));
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ received: true });
    await logged(`click ${event.data.click_id}`);
  });

  it('refuses a click signed with another secret, unhandled', async () => {
    const event = buildEvent('click');
    const answer = await fetch(await signedRequest(`${origin}/`, { secret: generateSecret(), event }));
    expect(answer.status).toBe(401);
    // A handled click after it is logged after it: the forged one, sent first, never was.
    const after = buildEvent('click');
    expect((await fetch(await signedRequest(`${origin}/`, { secret: SECRET, event: after }))).status).toBe(
      200,
    );
    await logged(`click ${after.data.click_id}`);
    expect(printed).not.toContain(event.data.click_id);
  });
});
