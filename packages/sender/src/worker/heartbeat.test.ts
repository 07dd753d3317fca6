/**
 * The heartbeat (design I3): a worker renews the leases of its attempts while they run; a request
 * whose lease was taken over, or would lapse because the store cannot be reached, is abandoned
 * and nothing of it is recorded. The request here only ends when it is abandoned.
 */

import { describe, expect, it } from 'vitest';
import { made, workerOptions } from '../../test/helpers/worker-options.js';
import { ManualClock } from '../clock.js';
import type { DeliveryClient, SendRequest } from '../delivery/http-client.js';
import { newId } from '../domain/ids.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { SenderStore } from '../store/port.js';
import type { AttemptReport } from './attempt.js';
import { createWorker } from './worker.js';

const T0 = Date.UTC(2026, 10, 23, 12);
const LEASE = 10_000;

async function setUp(wrap: (store: SenderStore) => SenderStore = (s) => s) {
  const memory = createMemoryStore();
  const accountId = 'acct_heartbeat';
  const endpoint = await memory.createEndpoint({
    id: newId('ep'),
    accountId,
    url: 'https://receiver.example.com/hook',
    events: ['click'],
    secret: 'whsec_test',
    description: null,
    now: T0,
  });
  const body = Buffer.from('{"event":"click","timestamp":"2026-11-23T12:00:00Z","data":{}}');
  const {
    deliveries: [delivery],
  } = await memory.publish({ id: newId('evt', T0), accountId, name: 'click', body, createdAt: T0 }, () =>
    newId('dlv', T0),
  );
  const clock = new ManualClock(T0);
  let started: () => void = () => undefined;
  const sending = new Promise<void>((resolve) => {
    started = resolve;
  });
  const client: DeliveryClient = {
    send(request: SendRequest) {
      started();
      return new Promise((resolve) => {
        request.signal?.addEventListener('abort', () =>
          resolve({
            outcome: { ok: false, kind: 'timeout', message: 'abandoned' },
            durationMs: 1,
            responseSnippet: null,
          }),
        );
      });
    },
    close: async () => undefined,
    destroy: async () => undefined,
  };
  let reported: (r: AttemptReport) => void = () => undefined;
  const report = new Promise<AttemptReport>((resolve) => {
    reported = resolve;
  });
  const store = wrap(memory);
  const worker = createWorker(
    workerOptions(1, {
      queue: store,
      client,
      clock,
      leaseMs: LEASE,
      renewEveryMs: 5,
      onAttempt: reported,
      onError: () => undefined,
    }),
  );
  return { memory, store, endpoint, delivery: delivery!, clock, worker, sending, report };
}

describe('the heartbeat', () => {
  it('keeps a running attempt’s lease past its first expiry', async () => {
    let renewedPast: () => void = () => undefined;
    const renewal = new Promise<void>((resolve) => {
      renewedPast = resolve;
    });
    const { memory, clock, worker, sending } = await setUp((store) => ({
      ...store,
      async renewLeases(leases, expiresAt) {
        const held = await store.renewLeases(leases, expiresAt);
        if (held.length > 0 && expiresAt > T0 + LEASE) renewedPast();
        return held;
      },
    }));
    worker.start();
    await sending;
    clock.set(T0 + 9_000);
    await renewal;
    // Past the lease the claim set: nobody else can claim the delivery.
    expect(
      await memory.claimDue({ now: T0 + LEASE + 1, limit: 10, leaseMs: LEASE, perEndpointCap: 10 }),
    ).toEqual([]);
    await worker.stop(0);
  });

  it('abandons a request whose lease was taken over, and records nothing of it', async () => {
    const { memory, endpoint, delivery, clock, worker, sending, report } = await setUp();
    worker.start();
    await sending;
    // The worker stalls past its lease (the clock jumps) and another claimer takes over.
    clock.set(T0 + LEASE + 1);
    const [taken] = await memory.claimDue({ now: clock.now(), limit: 1, leaseMs: LEASE, perEndpointCap: 1 });
    expect(taken!.delivery.id).toBe(delivery.id);
    const abandoned = await report;
    expect(made(abandoned).applied.applied).toBe(false);
    const stored = await memory.getDelivery(endpoint.accountId, delivery.id);
    expect(stored!.attempts).toEqual([]);
    await worker.stop(0);
  });

  it('abandons a request whose lease would lapse while the store cannot be reached', async () => {
    const { clock, worker, sending, report } = await setUp((store) => ({
      ...store,
      renewLeases: () => Promise.reject(new Error('database unreachable')),
    }));
    worker.start();
    await sending;
    clock.set(T0 + LEASE - 1); // within one renewal of the lease's end
    expect(made(await report).applied.applied).toBe(false);
    await worker.stop(0);
  });

  it('abandons a request whose lease would lapse while a renewal never answers', async () => {
    // A renewal stuck behind a busy pool or a lock: neither renewed nor failed.
    const { clock, worker, sending, report } = await setUp((store) => ({
      ...store,
      renewLeases: () => new Promise(() => undefined),
    }));
    worker.start();
    await sending;
    clock.set(T0 + LEASE - 1);
    expect(made(await report).applied.applied).toBe(false);
    await worker.stop(0);
  });
});
