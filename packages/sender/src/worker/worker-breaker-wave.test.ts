/**
 * Requests out together to an endpoint that hangs end together: the slots the first time-outs free
 * go to no new request of that endpoint before its breaker opens (design D27, endpointCapOf), and a
 * claim that was out while it opened gives back what it brought of it (heldBack). Seen without
 * them: a second wave, as many again, hanging 30 s more.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { workerOptions } from '../../test/helpers/worker-options.js';
import { ManualClock } from '../clock.js';
import { type DeliveryClient, noAnswerWithin, type SendResult, timedOut } from '../delivery/http-client.js';
import { newId } from '../domain/ids.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { SenderStore } from '../store/port.js';
import { ACCOUNTS_TURN_MS, createWorker } from './worker.js';

const T0 = Date.UTC(2026, 11, 3, 12);
const CAP = 8;

/** Turns of the event loop until `done()`, at most `turns` (the worker's own steps, not a time). */
async function until(done: () => boolean, turns = 1_000) {
  for (let i = 0; i < turns && !done(); i++) await new Promise((resolve) => setImmediate(resolve));
  expect(done()).toBe(true);
}

describe('an endpoint whose requests out together all hang', () => {
  it('gets no new request as the first of them time out, and none once its breaker opens', async () => {
    const memory = createMemoryStore();
    const endpoint = await memory.createEndpoint({
      id: newId('ep'),
      accountId: 'acct_a',
      url: 'https://hanging.example.com/hook',
      events: ['click'] as never,
      secret: 'whsec_test',
      description: null,
      now: T0,
    });
    for (let i = 0; i < 3 * CAP; i++) {
      await memory.publish(
        { id: newId('evt', T0), accountId: 'acct_a', name: 'click', body: Buffer.from('{}'), createdAt: T0 },
        () => newId('dlv', T0),
      );
    }
    const clock = new ManualClock(T0);
    const out: ((result: SendResult) => void)[] = [];
    let sent = 0;
    const client: DeliveryClient = {
      send: () => {
        sent++;
        return new Promise((resolve) => out.push(resolve));
      },
      close: async () => undefined,
      destroy: async () => undefined,
    };
    const worker = createWorker(
      workerOptions(2 * CAP, { queue: memory, client, clock, perEndpointCap: CAP }),
    );
    const ticking = worker.tick();
    await until(() => sent === CAP);
    clock.advance(30_000);
    // They time out one by one, each given the worker's turn to claim what it may.
    for (let ended = 0; ended < CAP; ended++) {
      out.shift()!({ ...timedOut(noAnswerWithin(30_000)), durationMs: 30_000 });
      // Settled: the one ended, or a new request sent in its slot.
      await until(() => worker.inFlight === CAP - ended - 1 || sent > CAP);
      expect(sent, `after ${ended + 1} time-outs`).toBe(CAP);
    }
    await ticking;
    expect(sent).toBe(CAP);
    expect(await memory.getEndpoint('acct_a', endpoint.id)).toMatchObject({ enabled: true });
  });
});

/**
 * Three clicks out to an endpoint that hangs, a second claim out while they time out and its
 * breaker opens, five more clicks of it brought by that claim, or (`byTurn`) by the claim with the
 * accounts in turn just before it (design D77), whose deliveries wait for the second: both are
 * given back, none sent.
 */
async function claimOutWhileBreakerOpens(byTurn: boolean) {
  const memory = createMemoryStore();
  const endpoint = (url: string, events: string[]) =>
    memory.createEndpoint({
      id: newId('ep'),
      accountId: 'acct_a',
      url,
      events: events as never,
      secret: 'whsec_test',
      description: null,
      now: T0,
    });
  const hanging = await endpoint('https://hanging.example.com/hook', ['click']);
  await endpoint('https://answering.example.com/hook', ['conversion']);
  const publish = (name: string) =>
    memory.publish(
      { id: newId('evt', T0), accountId: 'acct_a', name, body: Buffer.from('{}'), createdAt: T0 },
      () => newId('dlv', T0),
    );
  for (let i = 0; i < 3; i++) await publish('click');
  await publish('conversion');
  // The second claim in due order waits at the store until the hanging endpoint's three have
  // timed out (a claim with the accounts in turn, design D77, comes before the first).
  let claims = 0;
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  // The releases wait too, until the test lets them go: the worker's stop must wait for them.
  let releases = 0;
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const store: SenderStore = {
    ...memory,
    async claimDue(request) {
      // Claims in due order only: a turn goes to claimTurn.
      if (++claims === 2) await gate;
      const claimed = await memory.claimDue(request);
      if (byTurn && claims === 1) {
        // The five clicks before the next claim, which is then one with the accounts in turn.
        for (let i = 0; i < 5; i++) await publish('click');
        vi.advanceTimersByTime(ACCOUNTS_TURN_MS);
      }
      return claimed;
    },
    async releaseLease(deliveryId, token) {
      releases++;
      await released;
      return memory.releaseLease(deliveryId, token);
    },
  };
  const clock = new ManualClock(T0);
  const out: ((result: SendResult) => void)[] = [];
  const sent: string[] = [];
  const client: DeliveryClient = {
    send: (request) => {
      sent.push(request.url);
      if (request.url.includes('answering'))
        return Promise.resolve({
          outcome: { ok: true, statusCode: 200 },
          durationMs: 5,
          responseSnippet: null,
        });
      return new Promise((resolve) => out.push(resolve));
    },
    close: async () => undefined,
    destroy: async () => undefined,
  };
  const worker = createWorker(workerOptions(2 * CAP, { queue: store, client, clock, perEndpointCap: CAP }));
  const ticking = worker.tick();
  await until(() => claims === 2 && out.length === 3);
  // While the claim is out: more clicks (unless the turn before it took them), and the three out
  // time out together.
  if (!byTurn) for (let i = 0; i < 5; i++) await publish('click');
  clock.advance(30_000);
  for (const answer of out.splice(0)) answer({ ...timedOut(noAnswerWithin(30_000)), durationMs: 30_000 });
  await until(() => worker.inFlight === 0);
  let done = false;
  void ticking.then(() => {
    done = true;
  });
  const toHanging = () => sent.filter((url) => url.includes('hanging')).length;
  open();
  await until(() => done || toHanging() > 3);
  expect(toHanging()).toBe(3);
  await ticking;
  expect(releases).toBe(5);
  let stopped = false;
  const stopping = worker.stop(0).then(() => {
    stopped = true;
  });
  for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
  expect(stopped).toBe(false);
  release();
  await stopping;
  // Given back, not held until their leases run out: claimable at once, past the breaker.
  const again = await memory.claimDue({
    now: clock.now(),
    limit: 10,
    leaseMs: 60_000,
    perEndpointCap: CAP,
  });
  expect(again.filter((c) => c.delivery.endpointId === hanging.id)).toHaveLength(5);
}

describe('a claim out while an endpoint’s breaker opens', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('gives back what it brought of that endpoint instead of sending it', () =>
    claimOutWhileBreakerOpens(false));

  it('gives back what the claim with the accounts in turn before it brought of that endpoint', () => {
    vi.useFakeTimers({ toFake: ['performance'] }); // the worker's monotonic clock, for the turns
    return claimOutWhileBreakerOpens(true);
  });
});
