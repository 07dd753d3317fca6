/**
 * The Next.js adapters inside a real Next app: one `next build` of test/fixtures/next-app, then
 * `next start` on a loopback port, driven over HTTP. The fixture imports `@linkhooks/receiver/next`
 * by package name, as a customer's app does, so this exercises the built dist files through Next's
 * own bundler (Turbopack) and request handling — App Router and Pages Router alike.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { buildEvent, generateSecret, signedDelivery } from '@linkhooks/receiver/testing';
import { groupRunning } from '@linkhooks/runtimes';
import { Webhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Recorded, THROWING_CLICK_ID } from './fixtures/next-app/lib/record.js';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const appDir = join(packageDir, 'test/fixtures/next-app');
const nextBin = createRequire(import.meta.url).resolve('next/dist/bin/next');

const SIGNATURE = 'x-service-signature';
const secret = generateSecret();
// `next build` evaluates each route module ("Collecting page data"). It runs here WITHOUT
// LINKHOOKS_SECRET, as in a CI that only has secrets at deploy time: the Next adapters check their
// options on the first delivery.

/** The environment for Next's CLI: vitest's NODE_ENV=test would make Next warn and misbehave. */
function nextEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NEXT_TELEMETRY_DISABLED: '1', ...extra };
  delete env.NODE_ENV;
  return env;
}

function withoutSecret(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  delete env.LINKHOOKS_SECRET;
  return env;
}

/** Runs `next build` to completion, failing with its output when it fails. */
function nextBuild(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [nextBin, 'build'], {
      cwd: appDir,
      env: withoutSecret(nextEnv({})),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`next build failed (${signal ?? `exit ${code}`}):\n${output}`));
    });
  });
}

/** Whether something accepts TCP connections on the loopback port. */
function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

interface RunningNext {
  child: ChildProcess;
  pid: number;
  /** The port it listens on, once waitUntilServing has read it from its output. */
  port?: number;
  logs: string[];
  exited: Promise<void>;
}

/**
 * `next start` in its own process group, so stopping it can take anything it spawned along. On a
 * port the kernel picks as it listens: one picked here first could be taken, meanwhile, by one of
 * the other tests' outgoing connections.
 */
function nextStart(recordDir: string): RunningNext {
  const child = spawn(process.execPath, [nextBin, 'start', '--hostname', '127.0.0.1', '--port', '0'], {
    cwd: appDir,
    env: nextEnv({ LINKHOOKS_SECRET: secret, LINKHOOKS_RECORD_DIR: recordDir }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const logs: string[] = [];
  child.stdout?.on('data', (chunk) => logs.push(String(chunk)));
  child.stderr?.on('data', (chunk) => logs.push(String(chunk)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (child.pid === undefined) throw new Error('next start did not spawn');
  return { child, pid: child.pid, logs, exited };
}

/**
 * Resolves once `next start` says it is ready (it prints where it listens, then "Ready"), told by
 * its output as it arrives, with `next.port` set from it; fails at once if the process exits
 * first, or after `timeoutMs`.
 */
function waitUntilServing(next: RunningNext, timeoutMs = 60_000): Promise<void> {
  const ready = () => {
    const printed = next.logs.join('');
    const port = /http:\/\/127\.0\.0\.1:(\d+)/.exec(printed)?.[1];
    if (!/\bReady\b/.test(printed) || port === undefined) return false;
    next.port = Number(port);
    return true;
  };
  if (ready()) return Promise.resolve();
  const streams = [next.child.stdout!, next.child.stderr!];
  return new Promise((resolve, reject) => {
    const done = (error?: Error) => {
      clearTimeout(timer);
      for (const stream of streams) stream.off('data', check);
      next.child.off('exit', exited);
      if (error) reject(error);
      else resolve();
    };
    // The listeners that collect `logs` were added first, so they hold this chunk already.
    const check = () => ready() && done();
    const exited = () => done(new Error(`next start exited before serving:\n${next.logs.join('')}`));
    const timer = setTimeout(
      () => done(new Error(`next start was not ready within ${timeoutMs} ms:\n${next.logs.join('')}`)),
      timeoutMs,
    );
    for (const stream of streams) stream.on('data', check);
    next.child.once('exit', exited);
  });
}

/** Stops the server and throws if it (or anything in its process group) outlives the stop. */
async function stopNext(next: RunningNext): Promise<void> {
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-next.pid, signal);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  };
  signalGroup('SIGTERM');
  const timeout = new AbortController();
  const stopped = await Promise.race([
    next.exited.then(() => true),
    delay(10_000, false, { signal: timeout.signal }).catch(() => false),
  ]);
  timeout.abort();
  if (!stopped) {
    signalGroup('SIGKILL');
    await next.exited;
    throw new Error(`next start (pid ${next.pid}) ignored SIGTERM for 10 s and had to be killed`);
  }
  // The leader is gone; nothing it spawned may still run in its group (a zombie has ended: it only
  // waits for init to collect it), nor listen on its port.
  if (groupRunning(next.pid)) {
    signalGroup('SIGKILL');
    throw new Error(`processes of next start's group ${next.pid} outlived it and had to be killed`);
  }
  if (next.port !== undefined && (await accepting(next.port))) {
    throw new Error(`something still listens on port ${next.port} after next start exited`);
  }
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json:
    | {
        received?: boolean;
        duplicate?: boolean;
        code?: string;
        error?: { code: string; message: string; hint?: string };
      }
    | undefined;
}

const sha256 = (body: string | Uint8Array) => createHash('sha256').update(body).digest('hex');

describe('Next.js adapters in a real `next build` + `next start` app', () => {
  let next: RunningNext | undefined;
  let recordDir: string;
  let killOnExit: (() => void) | undefined;

  beforeAll(async () => {
    if (!existsSync(join(packageDir, 'dist/adapters/next.js'))) {
      throw new Error(
        'packages/receiver/dist is missing: the fixture app imports the built package. Run `pnpm build` first.',
      );
    }
    recordDir = await mkdtemp(join(tmpdir(), 'linkhooks-next-'));
    await nextBuild();
    next = nextStart(recordDir);
    // Should this worker die without running afterAll, do not leave the server behind.
    const pid = next.pid;
    killOnExit = () => {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    process.once('exit', killOnExit);
    await waitUntilServing(next);
  }, 240_000);

  afterAll(async () => {
    try {
      if (next) await stopNext(next);
    } finally {
      if (killOnExit) process.off('exit', killOnExit);
      if (recordDir) await rm(recordDir, { recursive: true, force: true });
    }
  }, 30_000);

  async function request(path: string, init: RequestInit = {}): Promise<Answer> {
    const response = await fetch(`http://127.0.0.1:${next!.port}${path}`, init);
    const text = await response.text();
    let json: Answer['json'];
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, text, json };
  }

  const post = (path: string, body: string | Uint8Array, headers: Record<string, string>) =>
    request(path, { method: 'POST', headers, body: body as BodyInit });

  /** What the fixture's handlers recorded for one route (the JSON-lines file they append to). */
  async function recorded(route: string): Promise<Recorded[]> {
    let text: string;
    try {
      text = await readFile(join(recordDir, 'events.jsonl'), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    return text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Recorded)
      .filter((r) => r.route === route);
  }

  const runsFor = async (route: string, clickId: string) =>
    (await recorded(route)).filter((r) => r.click_id === clickId);

  function expectReceived(answer: Answer): void {
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('{"received":true}');
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  }

  function expectError(answer: Answer, status: number, code: string): void {
    expect(answer.status).toBe(status);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.json?.error).toMatchObject({ code, message: expect.any(String) });
  }

  describe.each([
    { router: 'App Router (webhookRoute)', route: 'app', path: '/api/webhooks' },
    {
      router: 'Pages Router (webhookApiRoute, bodyParser: false)',
      route: 'pages',
      path: '/api/pages-webhooks',
    },
  ])('$router', ({ route, path }) => {
    it('verifies a signed click, runs the handler on the exact bytes and answers 200 {"received":true}', async () => {
      const event = buildEvent('click');
      const { body, headers } = signedDelivery({ secret, event });
      expectReceived(await post(path, body, headers));
      expect(await runsFor(route, event.data.click_id)).toEqual([
        { route, event: 'click', click_id: event.data.click_id, raw_sha256: sha256(body) },
      ]);
    });

    it('verifies a body JSON.stringify would not reproduce, signed over its exact bytes', async () => {
      const event = buildEvent('click');
      // Keys reordered, irregular whitespace and CRLF, and an escape JSON.stringify would not write.
      const fields = Object.entries(event.data)
        .reverse()
        .map(([key, value]) => `\t${JSON.stringify(key)} :  ${JSON.stringify(value)}`)
        .join(' ,\n');
      const body =
        `{ "timestamp":"${event.timestamp}" ,\r\n  "data": {\n${fields}\n   },\n"event"\t: "click"}\n`.replace(
          '"Berlin"',
          '"\\u0042erlin"',
        );
      expect(JSON.parse(body)).toEqual(event);
      expect(JSON.stringify(JSON.parse(body))).not.toBe(body);

      const delivery = signedDelivery({ secret, body });
      expectReceived(await post(path, delivery.body, delivery.headers));
      expect(await runsFor(route, event.data.click_id)).toEqual([
        { route, event: 'click', click_id: event.data.click_id, raw_sha256: sha256(body) },
      ]);
    });

    it('accepts the signature in uppercase hex', async () => {
      const event = buildEvent('click');
      const { body, headers } = signedDelivery({ secret, event });
      expectReceived(await post(path, body, { ...headers, [SIGNATURE]: headers[SIGNATURE]!.toUpperCase() }));
      expect(await runsFor(route, event.data.click_id)).toHaveLength(1);
    });

    it('answers 401 invalid_signature to a body signed with another secret, without running the handler', async () => {
      const event = buildEvent('click');
      const { body, headers } = signedDelivery({ secret: generateSecret(), event });
      expectError(await post(path, body, headers), 401, 'invalid_signature');
      expect(await runsFor(route, event.data.click_id)).toEqual([]);
    });

    it('answers 401 invalid_signature, and nothing more, when the signature header is absent', async () => {
      const event = buildEvent('click');
      const { body, headers } = signedDelivery({ secret, event });
      const { [SIGNATURE]: _dropped, ...unsigned } = headers;
      const answer = await post(path, body, unsigned);
      expectError(answer, 401, 'invalid_signature');
      expect(answer.json).toEqual({ error: { code: 'invalid_signature', message: 'Invalid signature.' } });
      expect(await runsFor(route, event.data.click_id)).toEqual([]);
    });

    it('answers 401 invalid_signature, without a hint, to a sha256= prefixed signature', async () => {
      const event = buildEvent('click');
      const { body, headers } = signedDelivery({ secret, event });
      const answer = await post(path, body, { ...headers, [SIGNATURE]: `sha256=${headers[SIGNATURE]}` });
      expectError(answer, 401, 'invalid_signature');
      expect(answer.json?.error?.hint).toBeUndefined();
      expect(await runsFor(route, event.data.click_id)).toEqual([]);
    });

    it('answers 400 invalid_payload to a verified body that is not a valid envelope', async () => {
      const clickId = `clk_invalid_${route}`;
      const body = JSON.stringify({ event: 'click', timestamp: 'yesterday', data: { click_id: clickId } });
      const delivery = signedDelivery({ secret, body });
      expectError(await post(path, delivery.body, delivery.headers), 400, 'invalid_payload');
      expect(await runsFor(route, clickId)).toEqual([]);
    });

    it('answers 400 invalid_json to a verified body that is not JSON', async () => {
      const delivery = signedDelivery({ secret, body: '{"event": "click", ' });
      expectError(await post(path, delivery.body, delivery.headers), 400, 'invalid_json');
    });

    it('answers 200 to an empty POST (the setup check)', async () => {
      expectReceived(await post(path, '', { 'content-type': 'application/json' }));
    });

    it('acknowledges a signed event with an unknown name and hands it to the `unknown` handler', async () => {
      const clickId = `clk_unknown_${route}_${Date.now()}`;
      const body = JSON.stringify({
        event: 'link.archived',
        timestamp: '2026-01-02T03:04:05Z',
        data: { click_id: clickId },
      });
      const delivery = signedDelivery({ secret, body });
      expectReceived(await post(path, delivery.body, delivery.headers));
      expect(await runsFor(route, clickId)).toEqual([
        { route, event: 'link.archived', click_id: clickId, raw_sha256: sha256(body) },
      ]);
    });

    it('answers 500 handler_error when the handler throws, so the service retries', async () => {
      const before = (await runsFor(route, THROWING_CLICK_ID)).length;
      const event = buildEvent('click', { data: { click_id: THROWING_CLICK_ID } });
      const { body, headers } = signedDelivery({ secret, event });
      expectError(await post(path, body, headers), 500, 'handler_error');
      expect(await runsFor(route, THROWING_CLICK_ID)).toHaveLength(before + 1);
    });

    it('answers 405 to a GET', async () => {
      const answer = await request(path);
      expect(answer.status).toBe(405);
    });
  });

  describe.each([
    { router: 'App Router', route: 'app-standard', path: '/api/standard-webhooks' },
    { router: 'Pages Router', route: 'pages-standard', path: '/api/pages-standard-webhooks' },
  ])('$router with scheme "standard-webhooks"', ({ route, path }) => {
    // `next start` runs in its own process on the real clock: a timestamp of now is fresh, one an
    // hour old is stale whatever the run's timing, against the 300 s default tolerance.
    const now = () => Math.floor(Date.now() / 1000);
    function signedByLibrary(options: { seconds?: number; svix?: boolean } = {}) {
      const event = buildEvent('click');
      const body = JSON.stringify(event);
      const id = `msg_${event.data.click_id}`;
      const seconds = options.seconds ?? now();
      const prefix = options.svix ? 'svix' : 'webhook';
      const signer = options.svix ? new SvixWebhook(secret) : new Webhook(secret);
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        [`${prefix}-id`]: id,
        [`${prefix}-timestamp`]: String(seconds),
        [`${prefix}-signature`]: signer.sign(id, new Date(seconds * 1000), body),
      };
      return { event, body, id, headers };
    }

    it('accepts a delivery signed by the standardwebhooks library and records its webhook-id', async () => {
      const { event, body, id, headers } = signedByLibrary();
      expectReceived(await post(path, body, headers));
      expect(await runsFor(route, event.data.click_id)).toEqual([
        {
          route,
          event: 'click',
          click_id: event.data.click_id,
          raw_sha256: sha256(body),
          webhook_id: id,
          test: false,
        },
      ]);
    });

    it('accepts the svix-* names signed by the svix library', async () => {
      const { event, body, headers } = signedByLibrary({ svix: true });
      expectReceived(await post(path, body, headers));
      expect(await runsFor(route, event.data.click_id)).toHaveLength(1);
    });

    it('answers a replayed webhook-id 200 replayed_webhook_id and runs the handler once', async () => {
      const { event, body, headers } = signedByLibrary();
      expectReceived(await post(path, body, headers));
      const replay = await post(path, body, headers);
      expect(replay.status).toBe(200);
      expect(replay.json).toEqual({ received: true, duplicate: true, code: 'replayed_webhook_id' });
      expect(await runsFor(route, event.data.click_id)).toHaveLength(1);
    });

    it.each([
      [
        'an hour-old timestamp',
        (_: ReturnType<typeof signedByLibrary>) => signedByLibrary({ seconds: now() - 3600 }),
      ],
      [
        'no webhook-id',
        (d: ReturnType<typeof signedByLibrary>) => {
          delete d.headers['webhook-id'];
          return d;
        },
      ],
      [
        'only X-Service-Signature (body-only)',
        (d: ReturnType<typeof signedByLibrary>) => {
          const bodyOnly = signedDelivery({ secret, body: d.body });
          return { ...d, headers: bodyOnly.headers };
        },
      ],
    ])('answers 401 invalid_signature to %s, without running the handler', async (_, alter) => {
      const delivery = alter(signedByLibrary());
      const answer = await post(path, delivery.body, delivery.headers);
      expectError(answer, 401, 'invalid_signature');
      expect(await runsFor(route, delivery.event.data.click_id)).toEqual([]);
    });
  });

  it('Pages Router: the adapter itself answers a GET with 405 method_not_allowed and Allow: POST', async () => {
    const answer = await request('/api/pages-webhooks');
    expectError(answer, 405, 'method_not_allowed');
    expect(answer.headers.get('allow')).toBe('POST');
  });

  it('Pages Router without bodyParser: false answers 500 body_already_parsed, naming the config fix with exposeHints', async () => {
    const event = buildEvent('click');
    const { body, headers } = signedDelivery({ secret, event });
    const answer = await post('/api/misconfigured', body, headers);
    expectError(answer, 500, 'body_already_parsed');
    expect(answer.json?.error?.hint).toContain('bodyParser: false');
    expect(await runsFor('misconfigured', event.data.click_id)).toEqual([]);
  });
});
