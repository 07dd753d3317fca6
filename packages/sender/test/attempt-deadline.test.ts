/**
 * The hard attempt deadline (design D24), against a stalled origin: a server that accepts TCP
 * connections and never answers, so undici's pool queues requests behind sockets stuck in their
 * handshake. Every attempt ends at the deadline (queueing included), and no delivery is sent again
 * while an earlier request of it is still open.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildEvent } from '@linkhooks/receiver/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../src/clock.js';
import { createDeliveryClient, type DeliveryClient } from '../src/delivery/http-client.js';
import { createSender } from '../src/engine/sender.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { createTestCertificates } from './helpers/test-ca.mjs';

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
  });
});

describe('engine', () => {
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
    // One origin may have 32 requests open (its share), twice the pool's 16 sockets: half of them
    // wait in the pool. Those 32 are what is measured; after them the origin's circuit breaker
    // holds the rest back.
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
      onAttempt: (report) => {
        durations.push(report.attempt.durationMs);
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
