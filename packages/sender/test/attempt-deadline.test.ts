/**
 * The hard attempt deadline (design D24), against a stalled origin: a server that accepts TCP
 * connections and never answers, so undici's pool queues requests behind sockets stuck in their
 * handshake. Every attempt ends at the deadline (queueing included), and no delivery is sent again
 * while an earlier request of it is still open. A request that waited behind the origin's earlier
 * requests for a connection until its deadline is given back unsent, never written.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildEvent } from '@linkhooks/receiver/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../src/clock.js';
import { type AbandonSignal, createAbandon } from '../src/delivery/abandon.js';
import {
  createDeliveryClient,
  type DeliveryClient,
  givenBack,
  noAnswerWithin,
  noConnectionWithin,
} from '../src/delivery/http-client.js';
import { CONNECTIONS_PER_ORIGIN } from '../src/delivery/origin-requests.js';
import { ATTEMPT_TIMEOUT_MS } from '../src/domain/schedule.js';
import { createSender } from '../src/engine/sender.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { AttemptReport } from '../src/worker/attempt.js';
import { addEndpoint } from './helpers/endpoints.js';
import { ACCOUNT } from './helpers/harness.js';
import { startHttpsReceiver } from './helpers/https-receiver.js';
import { type RawReceiver, startRawReceiver } from './helpers/raw-receiver.js';
import { createTestCertificates } from './helpers/test-ca.mjs';
import { made } from './helpers/worker-options.js';

const certs = createTestCertificates();
let stalled: Server;
let stalledOrigin: string;
const sockets: Socket[] = [];
let dir: string;

beforeAll(async () => {
  stalled = createServer((socket) => void sockets.push(socket));
  await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
  stalledOrigin = `https://localhost:${(stalled.address() as { port: number }).port}`;
  dir = mkdtempSync(join(tmpdir(), 'linkhooks-deadline-'));
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => stalled.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

const DEADLINE_MS = 1_000;
const body = new TextEncoder().encode('{}');

/** A deadline long enough that receivers answering at fractions of it keep wide margins. */
const LONG_DEADLINE_MS = 3_000;

/**
 * A receiver of its own (routes answered as the test sets them, 200 unless set) and a client to it
 * with `connections` sockets per origin and the deadline given; both closed after `use`.
 */
async function withReceiver(
  connections: number,
  use: (receiver: RawReceiver, client: DeliveryClient) => Promise<void>,
  timeoutMs = DEADLINE_MS,
) {
  const receiver = await startRawReceiver(certs);
  const client = createDeliveryClient({
    ca: certs.ca,
    allowPrivateNetworks: true,
    timeoutMs,
    connectionsPerOrigin: connections,
  });
  try {
    await use(receiver, client);
  } finally {
    await client.destroy();
    await receiver.close();
  }
}

describe('delivery client', () => {
  it('ends every one of 50 requests to one stalled origin at the deadline, queued ones included', async () => {
    const client = createDeliveryClient({ ca: certs.ca, allowPrivateNetworks: true, timeoutMs: DEADLINE_MS });
    const started = performance.now();
    const ended = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const result = await client.send({ url: `${stalledOrigin}/hooks/${i}`, body, headers: {} });
        return { wallMs: performance.now() - started, result };
      }),
    );
    await client.destroy();
    for (const { wallMs, result } of ended) {
      expect(result.outcome).toMatchObject({ ok: false, kind: 'timeout' });
      expect(result.durationMs).toBeLessThanOrEqual(DEADLINE_MS + 1_000);
      expect(wallMs).toBeLessThanOrEqual(DEADLINE_MS + 1_000);
    }
    // The pool's first 16 waited on handshakes of their own: the receiver's time-outs. The rest
    // waited behind those for a connection, and were never sent.
    expect(ended.map(({ result }) => result.unsent ?? false)).toEqual([
      ...Array(CONNECTIONS_PER_ORIGIN).fill(false),
      ...Array(50 - CONNECTIONS_PER_ORIGIN).fill(true),
    ]);
  });

  it('gives back unsent, never written, a request that waited behind requests its receiver holds', async () => {
    await withReceiver(1, async (receiver, client) => {
      for (const route of ['a', 'b', 'c', 'd']) receiver.route(route, () => null); // all hang
      // a holds the one connection until its deadline; b, next in line, is given back at nearly
      // the same moment, or takes the connection freed then; c is still waiting at its own.
      const [a, , c] = await Promise.all(
        ['a', 'b', 'c'].map((route) => client.send({ url: receiver.route(route), body, headers: {} })),
      );
      expect(a!.unsent).toBeUndefined();
      expect(a!.outcome).toMatchObject({ kind: 'timeout', message: noAnswerWithin(DEADLINE_MS) });
      expect(c!.unsent).toBe(true);
      expect(c!.outcome).toMatchObject({ kind: 'timeout', message: noConnectionWithin(DEADLINE_MS) });
      // A request after them finds a connection: the one given back was cut, not written later.
      const after = await client.send({ url: receiver.route('d'), body, headers: {} });
      expect(after.unsent).toBeUndefined();
      const seen = receiver.requests.map((r) => r.route);
      expect(seen).toContain('d');
      expect(seen).not.toContain('c');
    });
  });

  it("sends an account's request through the second pool while another account's hold the first", async () => {
    await withReceiver(1, async (receiver, client) => {
      receiver.route('hangs', () => null); // holds its connection until its deadline
      const send = (route: string, account: string) =>
        client.send({ url: receiver.route(route), body, headers: {}, account });
      const started = performance.now();
      const held = [send('hangs', 'acct_a'), send('hangs', 'acct_a')];
      // acct_a's first holds the one connection, its second waits behind it; acct_b waits for neither
      // (had acct_a's second gone through the second pool, it would hold that one's connection, and
      // acct_b's would wait behind it).
      const other = await send('answers', 'acct_b');
      expect(other.outcome).toEqual({ ok: true, statusCode: 200 });
      expect(performance.now() - started).toBeLessThan(DEADLINE_MS);
      const [first, second] = await Promise.all(held);
      expect(first!.outcome).toMatchObject({ kind: 'timeout', message: noAnswerWithin(DEADLINE_MS) });
      // Its own account's request ahead of it kept it waiting, in the first pool.
      expect(second!.outcome).toMatchObject({ ok: false, kind: 'timeout' });
    });
  });

  it("counts a request cut before its writing no more: its account's next one is routed without it", async () => {
    await withReceiver(4, async (receiver, client) => {
      receiver.route('hangs', () => null);
      const send = (account: string, route = 'hangs', signal?: AbandonSignal) =>
        client.send({
          url: receiver.route(route),
          body,
          headers: {},
          account,
          ...(signal ? { signal } : {}),
        });
      const out = [0, 1, 2, 3].map(() => send('acct_a')); // the first pool full
      const lost = [createAbandon(), createAbandon()];
      out.push(send('acct_b'), send('acct_b', 'hangs', lost[0]!.signal)); // the second pool
      out.push(send('acct_b', 'hangs', lost[1]!.signal)); // half the connections: waits in the first
      // Two of acct_b's leases lost: the waiting one and one in the second pool.
      for (const abandon of lost) abandon.abort();
      const started = performance.now();
      const next = await send('acct_b', 'answers');
      expect(next.outcome).toEqual({ ok: true, statusCode: 200 });
      expect(performance.now() - started).toBeLessThan(DEADLINE_MS);
      await Promise.all(out);
    });
  });

  it('keeps the connection a request given back unsent would have had, when its turn comes', async () => {
    // z holds the one connection for half a deadline, a then for 0.8 of one (its own deadline
    // starts at its writing); b waits behind both and is given back at its deadline, and is
    // still in the pool's queue when a's answer frees the connection.
    await withReceiver(
      1,
      async (receiver, client) => {
        receiver.route('z', () => ({ status: 200, delayMs: LONG_DEADLINE_MS / 2 }));
        receiver.route('a', () => ({ status: 200, delayMs: LONG_DEADLINE_MS * 0.8 }));
        const [z, a, b] = await Promise.all(
          ['z', 'a', 'b'].map((route) => client.send({ url: receiver.route(route), body, headers: {} })),
        );
        expect([z!.outcome.ok, a!.outcome.ok, b!.unsent]).toEqual([true, true, true]);
        const after = await client.send({ url: receiver.route('c'), body, headers: {} });
        expect(after.outcome).toEqual({ ok: true, statusCode: 200 });
        expect(receiver.connections).toBe(1);
      },
      LONG_DEADLINE_MS,
    );
  });

  it("gives a request that waited for a connection its receiver's whole deadline from its writing", async () => {
    // The first holds the one connection for half a deadline; the second, written then, is
    // answered three quarters of a deadline later: past its dispatch's deadline, within its own.
    const secondAfterMs = (LONG_DEADLINE_MS * 3) / 4;
    await withReceiver(
      1,
      async (receiver, client) => {
        receiver.route('first', () => ({ status: 200, delayMs: LONG_DEADLINE_MS / 2 }));
        receiver.route('second', () => ({ status: 200, delayMs: secondAfterMs }));
        const started = performance.now();
        const [first, second] = await Promise.all(
          ['first', 'second'].map((route) => client.send({ url: receiver.route(route), body, headers: {} })),
        );
        expect(first!.outcome).toEqual({ ok: true, statusCode: 200 });
        expect(second!.outcome).toEqual({ ok: true, statusCode: 200 });
        expect(performance.now() - started).toBeGreaterThan(LONG_DEADLINE_MS);
        // Its duration is its receiver's: from its writing.
        expect(second!.durationMs).toBeGreaterThanOrEqual(secondAfterMs - 1);
        expect(second!.durationMs).toBeLessThan(LONG_DEADLINE_MS);
      },
      LONG_DEADLINE_MS,
    );
  });
});

describe('engine', () => {
  it('gives back a request never sent: nothing recorded or counted against its endpoint, due again as it was', async () => {
    const receiver = await startHttpsReceiver(certs);
    const real = createDeliveryClient({ ca: certs.ca, allowPrivateNetworks: true });
    // Each delivery's first three requests wait a whole deadline for a connection, as behind
    // another customer's hanging requests at a shared server; the fourth goes out.
    const waits = new Map<string, number>();
    const client: DeliveryClient = {
      async send(request) {
        const id = String(request.headers['x-service-delivery-id']);
        const waited = waits.get(id) ?? 0;
        if (waited === 3) return real.send(request);
        waits.set(id, waited + 1);
        return { ...givenBack(ATTEMPT_TIMEOUT_MS), durationMs: ATTEMPT_TIMEOUT_MS };
      },
      close: () => real.close(),
      destroy: () => real.destroy(),
    };
    const store = createSqliteStore({ filename: join(dir, 'given-back.db') });
    await store.migrate();
    const reports: AttemptReport[] = [];
    const sender = createSender({
      store,
      clock: systemClock,
      client,
      allowPrivateNetworks: true,
      onAttempt: (report) => reports.push(report),
    });
    try {
      const { route, endpoint } = await addEndpoint(sender, receiver);
      const { deliveries } = await sender.publish(ACCOUNT, buildEvent('click'));
      const deliveryId = deliveries[0]!.id;
      await sender.tick();

      expect(reports.map((r) => (r.unsent ? 'unsent' : r.applied.applied))).toEqual([
        'unsent',
        'unsent',
        'unsent',
        true,
      ]);
      // Three waits of 30 s each would have opened the endpoint's breaker had they been attempts.
      expect(made(reports[3]!).attempt).toMatchObject({ number: 1, failureKind: null });
      expect(receiver.received.filter((r) => r.route === route).map((r) => r.attempt)).toEqual([1]);
      const { delivery, attempts } = await sender.getDelivery(ACCOUNT, deliveryId);
      expect(delivery).toMatchObject({ status: 'delivered', attempts: 1 });
      expect(attempts.map((a) => a.number)).toEqual([1]);
      expect((await sender.getEndpoint(ACCOUNT, endpoint.id)).consecutiveFailures).toBe(0);
      const metrics = await sender.metrics.getMetricsAsJSON();
      const value = (name: string) => metrics.find((m) => m.name === name)?.values.map((v) => v.value);
      expect(value('linkhooks_requests_unsent_total')).toEqual([3]);
      expect(value('linkhooks_attempts_total')).toEqual([1]);
    } finally {
      await sender.stop(0);
      await real.destroy();
      await store.close();
      await receiver.close();
    }
  });

  it('records every attempt within the deadline and never sends a delivery twice at once, 50 endpoints on one stalled origin', async () => {
    const real = createDeliveryClient({ ca: certs.ca, allowPrivateNetworks: true, timeoutMs: DEADLINE_MS });
    // The real client, watched: which deliveries have a request open right now.
    const open = new Set<string>();
    const overlaps: string[] = [];
    const client: DeliveryClient = {
      async send(request) {
        const key = `${request.headers['x-service-delivery-id']}`;
        if (open.has(key)) overlaps.push(`${key} attempt ${request.headers['x-service-attempt']}`);
        open.add(key);
        try {
          return await real.send(request);
        } finally {
          open.delete(key);
        }
      },
      close: () => real.close(),
      destroy: () => real.destroy(),
    };
    const store = createSqliteStore({ filename: join(dir, 'engine.db') });
    await store.migrate();
    const durations: number[] = [];
    // One origin may have 32 requests open (its share, and this account's there), twice the pool's
    // 16 sockets: half of them wait in the pool, and are given back unsent at their deadline. Those
    // 32 are what is measured; after them the origin's circuit breaker holds the rest back.
    const total = 32;
    let reached: () => void = () => {};
    const allAttempted = new Promise<void>((resolve) => {
      reached = resolve;
    });
    const sender = createSender({
      store,
      clock: systemClock,
      client,
      allowPrivateNetworks: true,
      attemptTimeoutMs: DEADLINE_MS,
      // Half a second past the deadline: an attempt that overran it would lose its lease.
      leaseMs: DEADLINE_MS + 500,
      retryDelaysMs: [3_600_000, 3_600_000, 3_600_000, 3_600_000, 3_600_000],
      concurrency: 64,
      perEndpointCap: 8,
      perOriginCap: 32,
      perAccountAtOriginCap: 32,
      onAttempt: (report) => {
        // A request given back unsent has no attempt: the time it held its slot is its duration.
        durations.push(report.unsent ? report.heldMs : report.attempt.durationMs);
        if (durations.length === total) reached();
      },
    });
    const account = 'acct_deadline';
    for (let i = 0; i < 50; i++) {
      await sender.createEndpoint(account, { url: `${stalledOrigin}/hooks/${i}`, events: ['click'] });
    }
    for (let i = 0; i < 4; i++) {
      const { event, data } = buildEvent('click');
      await sender.publish(account, { event, data });
    }
    sender.start();
    await allAttempted;
    await sender.stop(0);
    await real.destroy();
    await store.close();

    expect(overlaps).toEqual([]);
    expect(durations.length).toBeGreaterThanOrEqual(total);
    expect(Math.max(...durations)).toBeLessThanOrEqual(DEADLINE_MS + 1_000);
  }, 60_000);
});
