/**
 * The worker's slots: with `freeSlotOnResponse` (the engine's choice on PostgreSQL) the next
 * request goes out while the previous attempt is still being recorded; without it, the slot is
 * held through the record. A store whose records wait on a gate the test opens shows which.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import type { DeliveryClient, SendRequest } from '../delivery/http-client.js';
import { DEFAULT_DISABLE_POLICY } from '../domain/disable-rule.js';
import { newId } from '../domain/ids.js';
import { DEFAULT_SCHEDULE } from '../domain/schedule.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { SenderStore } from '../store/port.js';
import { createWorker } from './worker.js';

const T0 = Date.UTC(2026, 10, 22, 12);

async function setUp(freeSlotOnResponse: boolean) {
  const memory = createMemoryStore();
  const accountId = 'acct_slots';
  await memory.createEndpoint({
    id: newId('ep'),
    accountId,
    url: 'https://receiver.example.com/hook',
    events: ['click'],
    secret: 'whsec_test',
    description: null,
    now: T0,
  });
  for (let i = 0; i < 3; i++) {
    const body = Buffer.from(`{"event":"click","timestamp":"2026-11-22T12:00:00Z","data":{"n":${i}}}`);
    await memory.publish({ id: newId('evt', T0), accountId, name: 'click', body, createdAt: T0 }, () =>
      newId('dlv', T0),
    );
  }

  // Records wait until the test opens the gate; each send notes how many were waiting then.
  let recording = 0;
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const finishing: string[][] = [];
  const store: SenderStore = {
    ...memory,
    claimDue(request) {
      finishing.push([...(request.finishing ?? [])]);
      return memory.claimDue(request);
    },
    async recordAttempt(result) {
      recording++;
      await gate;
      recording--;
      return memory.recordAttempt(result);
    },
  };
  const sends: { recordsWaiting: number }[] = [];
  const sent = new Set<() => void>();
  const client: DeliveryClient = {
    async send(_request: SendRequest) {
      sends.push({ recordsWaiting: recording });
      for (const check of sent) check();
      return { outcome: { ok: true, statusCode: 200 }, durationMs: 1, responseSnippet: null };
    },
    close: async () => undefined,
    destroy: async () => undefined,
  };
  const until = (predicate: () => boolean) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (!predicate()) return;
        sent.delete(check);
        resolve();
      };
      sent.add(check);
      check();
    });

  let delivered = 0;
  const allDelivered = new Promise<void>((resolve) => {
    const worker = createWorker({
      store,
      client,
      clock: new ManualClock(T0),
      schedule: DEFAULT_SCHEDULE,
      policy: DEFAULT_DISABLE_POLICY,
      userAgent: 'linkhooks-test',
      concurrency: 1,
      perEndpointCap: 1,
      batchSize: 1,
      leaseMs: 60_000,
      pollIntervalMs: 60_000,
      freeSlotOnResponse,
      onAttempt: (report) => {
        if (report.applied.status === 'delivered' && ++delivered === 3) {
          void worker.stop().then(resolve);
        }
      },
      onError: (error) => {
        throw error;
      },
    });
    worker.start();
  });
  return { sends, finishing, until, open, allDelivered };
}

describe('worker slots', () => {
  it('sends the next request while the previous attempt is recorded, with freeSlotOnResponse', async () => {
    const { sends, finishing, until, open, allDelivered } = await setUp(true);
    // One slot, one per endpoint: the second request can only be out if the first one's slot and
    // its place under the endpoint's cap were freed while its record still waits.
    await until(() => sends.length === 2);
    expect(sends[1]!.recordsWaiting).toBe(1);
    expect(finishing[1]).toHaveLength(1);
    open();
    await allDelivered;
    expect(sends).toHaveLength(3);
  });

  it('holds the slot through the record without it', async () => {
    const { sends, finishing, until, open, allDelivered } = await setUp(false);
    await until(() => sends.length === 1);
    open();
    await allDelivered;
    expect(sends.map((s) => s.recordsWaiting)).toEqual([0, 0, 0]);
    // No claim ever counted an attempt as over before it was recorded.
    expect(finishing.every((ids) => ids.length === 0)).toBe(true);
  });
});
