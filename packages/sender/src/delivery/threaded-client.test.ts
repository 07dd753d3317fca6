import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RawReceiver, startRawReceiver } from '../../test/helpers/raw-receiver.js';
import { createTestCertificates } from '../../test/helpers/test-ca.mjs';
import { createSender } from '../engine/sender.js';
import { createMemoryStore } from '../store/memory-store.js';
import { type AbandonSignal, createAbandon } from './abandon.js';
import { longestRequestMs, noAnswerWithin, noConnectionWithin, type SendResult } from './http-client.js';
import { createThreadedDeliveryClient } from './threaded-client.js';

// The thread runs the built program (`pnpm build`), as the package ships it.
const PROGRAM = new URL('../../dist/delivery-thread.js', import.meta.url);
const fixture = (name: string) => new URL(`../../test/fixtures/${name}`, import.meta.url);

let receiver: RawReceiver;
const certs = createTestCertificates();

beforeAll(async () => {
  receiver = await startRawReceiver(certs);
  for (const status of [200, 204, 410, 500]) {
    receiver.route(`status${status}`, (r) => ({ status, body: `answered ${status} to ${r.headers['x-n']}` }));
  }
  receiver.route('retry', () => ({ status: 503, headers: { 'retry-after': '7' }, body: 'busy' }));
  receiver.route('hang', () => null);
});

afterAll(() => receiver.close());

/** The URL of a route of the receiver: `status<code>`, `retry`, or `hang` (never answered). */
const at = (route: string) => `${receiver.origin}/hooks/${route}`;
const post = (route: string, n = 0, signal?: AbandonSignal) => ({
  url: at(route),
  body: Buffer.from(`{"n":${n}}`),
  headers: { 'content-type': 'application/json', 'x-n': String(n) },
  ...(signal ? { signal } : {}),
});
const bodies = () => receiver.requests.map((r) => r.body.toString('utf8'));
const hanging = () => receiver.requests.filter((r) => r.route === 'hang').length;

const client = (options: Parameters<typeof createThreadedDeliveryClient>[0] = {}) =>
  createThreadedDeliveryClient({ program: PROGRAM, ca: certs.ca, allowPrivateNetworks: true, ...options });

describe('the delivery client on a thread of its own', () => {
  it('answers each request with its own result, many handed over in one turn', async () => {
    const c = client();
    try {
      const statuses = Array.from({ length: 40 }, (_, i) => [200, 204, 410, 500][i % 4]!);
      const results = await Promise.all(statuses.map((s, i) => c.send(post(`status${s}`, i))));
      results.forEach((r, i) => {
        const s = statuses[i]!;
        expect(r.outcome).toEqual(
          s < 300
            ? { ok: true, statusCode: s }
            : { ok: false, kind: 'http_status', statusCode: s, message: `receiver answered ${s}` },
        );
        expect(r.responseSnippet).toBe(s === 204 ? '' : `answered ${s} to ${i}`);
      });
      expect(bodies()).toContain('{"n":39}');
      const retried = await c.send(post('retry'));
      expect(retried.retryAfter).toBe('7');
    } finally {
      await c.close();
    }
  });

  it('checks addresses in the thread: a private one is refused without the option', async () => {
    const c = client({ allowPrivateNetworks: false });
    try {
      const r = await c.send(post('status200'));
      expect(r.outcome).toMatchObject({ ok: false, kind: 'dns' });
    } finally {
      await c.close();
    }
  });

  it('cuts a request short when its signal aborts (the lease was lost)', async () => {
    const c = client();
    try {
      const abandon = createAbandon();
      const before = hanging();
      const sent = c.send(post('hang', 1, abandon.signal));
      await receiver.until(() => hanging() > before);
      abandon.abort();
      expect((await sent).outcome).toEqual({
        ok: false,
        kind: 'timeout',
        message: 'abandoned: the lease was lost',
      });
    } finally {
      await c.close();
    }
  });

  it("answers at the thread's own deadline", async () => {
    const c = client({ timeoutMs: 150 });
    try {
      const r = await c.send(post('hang', 2));
      expect(r.outcome).toEqual({ ok: false, kind: 'timeout', message: 'no answer within 150 ms' });
    } finally {
      await c.close();
    }
  });

  it('tells of a request the thread gave back unsent, behind others for its one connection', async () => {
    const c = client({ timeoutMs: 150, connectionsPerOrigin: 1 });
    try {
      // The first holds the connection until its deadline; the second is given back at nearly the
      // same moment, or takes the connection freed then; the third is still waiting at its own.
      const [held, , queued] = await Promise.all([1, 2, 3].map((n) => c.send(post('hang', n))));
      expect(held!.unsent).toBeUndefined();
      expect(held!.outcome).toEqual({ ok: false, kind: 'timeout', message: noAnswerWithin(150) });
      expect(queued!.unsent).toBe(true);
      expect(queued!.outcome).toEqual({ ok: false, kind: 'timeout', message: noConnectionWithin(150) });
    } finally {
      await c.close();
    }
  });

  it("hands each request's account to the thread: another account's hanging requests keep it waiting for no connection", async () => {
    const c = client({ timeoutMs: 2_000, connectionsPerOrigin: 1 });
    try {
      // Settled whichever way the destroy ends them.
      for (const n of [1, 2]) void c.send({ ...post('hang', n), account: 'acct_a' }).catch(() => {});
      const other = await c.send({ ...post('status200', 3), account: 'acct_b' });
      expect(other.outcome).toEqual({ ok: true, statusCode: 200 });
      expect(other.durationMs).toBeLessThan(2_000);
    } finally {
      await c.destroy(); // the hanging ones end at once
    }
  });

  it('answers past the deadline itself when the thread does not', async () => {
    const c = client({ program: fixture('silent-delivery-thread.mjs'), timeoutMs: 100, graceMs: 20 });
    try {
      const started = performance.now();
      const r = await c.send(post('status200'));
      expect(r.outcome).toEqual({ ok: false, kind: 'timeout', message: 'no answer within 100 ms' });
      // Not before the longest a request that waited for a connection may be out.
      expect(performance.now() - started).toBeGreaterThanOrEqual(longestRequestMs(100));
    } finally {
      await c.close();
    }
  });

  it('fails the requests of a thread that stopped (an error, not an outcome), and starts another', async () => {
    const errors: Error[] = [];
    const c = client({
      program: fixture('crashing-delivery-thread.mjs'),
      onThreadError: (e) => errors.push(e),
    });
    try {
      const first = [c.send(post('status200', 1)), c.send(post('status200', 2))];
      for (const sent of first) {
        await expect(sent).rejects.toThrow(
          'the delivery thread stopped (the thread failed on 2 requests) before an answer',
        );
      }
      await expect(c.send(post('status200', 3))).rejects.toThrow('failed on 1 requests');
      expect(errors.map((e) => e.message)).toEqual([
        'the thread failed on 2 requests',
        'the thread failed on 1 requests',
      ]);
    } finally {
      await c.close();
    }
  });

  it('refuses a program that is not there', () => {
    expect(() => client({ program: fixture('no-such-thread.mjs') })).toThrow(
      expect.objectContaining({
        code: 'invalid_option',
        message: expect.stringContaining('no-such-thread.mjs'),
      }),
    );
  });

  it('never sends a request abandoned before it was handed over', async () => {
    const c = client();
    try {
      const before = bodies().length;
      const abandon = createAbandon();
      abandon.abort();
      expect((await c.send(post('status200', 7, abandon.signal))).outcome).toEqual({
        ok: false,
        kind: 'timeout',
        message: 'abandoned: the lease was lost',
      });
      await c.send(post('status200', 8)); // one that is sent, to be sure the first would have arrived
      expect(bodies().slice(before)).toEqual(['{"n":8}']);
    } finally {
      await c.close();
    }
  });

  it('close waits for the requests in flight; a request after it is refused', async () => {
    const c = client();
    const sent = c.send(post('status200', 5));
    await c.close();
    const settled = await Promise.race([sent, Promise.resolve('pending' as const)]);
    expect((settled as SendResult).outcome).toEqual({ ok: true, statusCode: 200 });
    expect((await c.send(post('status200'))).outcome).toEqual({
      ok: false,
      kind: 'connect',
      message: 'the delivery client is closed',
    });
  });

  it('destroy ends the requests in flight at once', async () => {
    const c = client();
    const before = hanging();
    const sent = c.send(post('hang', 6));
    await receiver.until(() => hanging() > before);
    await c.destroy();
    const settled = await Promise.race([sent, Promise.resolve('pending' as const)]);
    // Cut by the client in the thread, not answered for a thread that went away.
    expect((settled as SendResult).outcome).toEqual({
      ok: false,
      kind: 'connect',
      message: 'UND_ERR_DESTROYED: The client is destroyed',
    });
  });

  it('is refused beside a name lookup of its own, which cannot reach the thread', () => {
    expect(() =>
      createSender({
        store: createMemoryStore(),
        deliveryThread: true,
        resolve: (_host, _options, done) => done(null, []),
      }),
    ).toThrow(
      expect.objectContaining({ code: 'invalid_option', message: expect.stringContaining('resolve') }),
    );
  });

  // Through the built package, ESM and CommonJS, as a user's script: one delivery and no close, or
  // a stop that cuts a request in flight short. Either way the script must end by itself, after
  // what it awaited.
  const script = (args: string[], arrived?: Promise<void>) =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, [fileURLToPath(fixture('one-threaded-request.mjs')), ...args], {
        stdio: ['pipe', 'pipe', 'inherit'],
        env: { ...process.env, CA: certs.ca },
      });
      void arrived?.then(() => child.stdin.end('arrived\n'));
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk;
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, out });
      });
    });

  it.each(['esm', 'cjs'])(
    'delivers through the package (%s) and lets the process end without a close',
    async (format) => {
      expect(await script([format, at('status200')])).toEqual({ code: 0, out: 'delivered\n' });
    },
  );

  it('lets the process end only once a stop has cut its requests short', async () => {
    const before = hanging();
    const ran = script(
      ['esm', at('hang'), 'stop'],
      receiver.until(() => hanging() > before),
    );
    expect(await ran).toEqual({ code: 0, out: 'stopped\n' });
  });
});
