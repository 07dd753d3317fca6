/**
 * The worker's slots: with `freeSlotOnResponse` (the engine's choice on PostgreSQL) the next
 * request goes out while the previous attempt is still being recorded; without it, the slot is
 * held through the record. A store whose records wait on a gate the test opens shows which.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { conditions } from '../../test/helpers/conditions.js';
import { made, workerOptions } from '../../test/helpers/worker-options.js';
import { ManualClock } from '../clock.js';
import type { DeliveryClient, SendRequest, SendResult } from '../delivery/http-client.js';
import { HELD_SLOT_MS } from '../domain/breaker.js';
import { DEFAULT_DISABLE_POLICY } from '../domain/disable-rule.js';
import { newId } from '../domain/ids.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { ClaimRequest, LeaseRef, SenderStore } from '../store/port.js';
import { LARGE_BODY_BYTES } from '../turn-budget.js';
import {
  ACCOUNTS_TURN_MAX_MS,
  ACCOUNTS_TURN_MS,
  createWorker,
  TURN_COST_SHARE,
  type Worker,
  type WorkerOptions,
} from './worker.js';

const T0 = Date.UTC(2026, 10, 22, 12);

const ACCOUNT = 'acct_slots';

async function seed(count: number) {
  const memory = createMemoryStore();
  await memory.createEndpoint({
    id: newId('ep'),
    accountId: ACCOUNT,
    url: 'https://receiver.example.com/hook',
    events: ['click'],
    secret: 'whsec_test',
    description: null,
    now: T0,
  });
  for (let i = 0; i < count; i++) await publishClick(memory, i);
  return memory;
}

/** Click `n` to the seeded account's endpoint, due at T0; `padBytes` more bytes in its data. */
async function publishClick(memory: SenderStore, n: number, padBytes = 0) {
  const pad = 'x'.repeat(padBytes);
  const body = Buffer.from(
    `{"event":"click","timestamp":"2026-11-22T12:00:00Z","data":{"n":${n},"pad":"${pad}"}}`,
  );
  await memory.publish({ id: newId('evt', T0), accountId: ACCOUNT, name: 'click', body, createdAt: T0 }, () =>
    newId('dlv', T0),
  );
}

async function setUp(freeSlotOnResponse: boolean) {
  const memory = await seed(3);

  // Records wait until the test opens the gate; each send notes how many were waiting then.
  let recording = 0;
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const finishing: LeaseRef[][] = [];
  const store: SenderStore = {
    ...memory,
    claimDue(request) {
      finishing.push([...(request.finishing ?? [])]);
      return memory.claimDue(request);
    },
    claimTurn(request) {
      finishing.push([...(request.finishing ?? [])]);
      return memory.claimTurn(request);
    },
    async recordAttempt(result) {
      recording++;
      await gate;
      recording--;
      return memory.recordAttempt(result);
    },
  };
  const sends: { recordsWaiting: number }[] = [];
  const sent = conditions();
  const client: DeliveryClient = {
    async send(_request: SendRequest) {
      sends.push({ recordsWaiting: recording });
      sent.changed();
      return { outcome: { ok: true, statusCode: 200 }, durationMs: 1, responseSnippet: null };
    },
    close: async () => undefined,
    destroy: async () => undefined,
  };
  const until = sent.until;

  let delivered = 0;
  const allDelivered = new Promise<void>((resolve) => {
    const worker = createWorker(
      workerOptions(1, {
        queue: store,
        client,
        clock: new ManualClock(T0),
        freeSlotOnResponse,
        onAttempt: (report) => {
          if (made(report).applied.status === 'delivered' && ++delivered === 3) {
            void worker.stop().then(resolve);
          }
        },
      }),
    );
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

/** A client whose every request stays out until the test answers it. */
function heldClient() {
  const out: { deliveryId: string; answer: () => void; refuse: () => void }[] = [];
  const sent = conditions();
  const client: DeliveryClient = {
    send(request: SendRequest) {
      return new Promise((resolve) => {
        out.push({
          deliveryId: request.headers['x-service-delivery-id'] ?? '',
          answer: () =>
            resolve({ outcome: { ok: true, statusCode: 200 }, durationMs: 1, responseSnippet: null }),
          refuse: () =>
            resolve({
              outcome: { ok: false, kind: 'http_status', statusCode: 500, message: 'receiver answered 500' },
              durationMs: 1,
              responseSnippet: null,
            }),
        });
        sent.changed();
      });
    },
    close: async () => undefined,
    destroy: async () => undefined,
  };
  const requests = (n: number) => sent.until(() => out.length >= n);
  return { client, out, requests };
}

describe('worker bookkeeping', () => {
  const options = (store: SenderStore, client: DeliveryClient, clock: ManualClock) =>
    workerOptions(2, { queue: store, client, clock, freeSlotOnResponse: true });

  it('tracks both attempts when its own lease ran out and it claimed the delivery again', async () => {
    const store = await seed(1);
    const clock = new ManualClock(T0);
    const { client, out, requests } = heldClient();
    const reports: boolean[] = [];
    let reported: () => void = () => undefined;
    const worker = createWorker({
      ...options(store, client, clock),
      onAttempt: (report) => {
        reports.push(made(report).applied.applied);
        reported();
      },
    });
    worker.start();
    await requests(1);
    // The first request outlives its lease; the delivery is due to whoever claims it: this worker.
    clock.advance(60_000);
    worker.wake();
    await requests(2);
    expect(out[1]!.deliveryId).toBe(out[0]!.deliveryId);
    expect(worker.inFlight).toBe(2);
    // The late answer loses its lease (invariant 3); the second attempt is still tracked.
    const late = new Promise<void>((resolve) => {
      reported = resolve;
    });
    out[0]!.answer();
    await late;
    await new Promise((resolve) => setImmediate(resolve));
    expect(reports).toEqual([false]);
    expect(worker.inFlight).toBe(1);
    out[1]!.answer();
    await worker.stop();
    expect(reports).toEqual([false, true]);
    expect(worker.inFlight).toBe(0);
  });

  it('on stop, gives back requests still out but not attempts being recorded', async () => {
    const memory = await seed(2);
    const clock = new ManualClock(T0);
    const { client, out, requests } = heldClient();
    let recording: () => void = () => undefined;
    const recordStarted = new Promise<void>((resolve) => {
      recording = resolve;
    });
    let finishRecord: () => void = () => undefined;
    const recordGate = new Promise<void>((resolve) => {
      finishRecord = resolve;
    });
    const released: string[] = [];
    let releasedOne: () => void = () => undefined;
    const releaseSeen = new Promise<void>((resolve) => {
      releasedOne = resolve;
    });
    const store: SenderStore = {
      ...memory,
      async recordAttempt(result) {
        recording();
        await recordGate;
        return memory.recordAttempt(result);
      },
      async releaseLease(deliveryId, token) {
        released.push(deliveryId);
        await memory.releaseLease(deliveryId, token);
        releasedOne();
      },
    };
    const applied: boolean[] = [];
    const worker = createWorker({
      ...options(store, client, clock),
      onAttempt: (report) => applied.push(made(report).applied.applied),
    });
    worker.start();
    await requests(2);
    out[0]!.answer();
    await recordStarted;
    // The grace period ends while one request is out and the other attempt is being recorded.
    const stopped = worker.stop(1);
    await releaseSeen;
    finishRecord();
    // stop() waits for the record it did not release.
    await stopped;
    // The answered attempt was recorded, not released; the one still out was released.
    expect(released).toEqual([out[1]!.deliveryId]);
    expect(applied).toEqual([true]);
    const log = await memory.getDelivery('acct_slots', out[0]!.deliveryId);
    expect(log!.delivery.status).toBe('delivered');
    // The released delivery is due again at once, for any worker.
    const [again] = await memory.claimDue({ now: T0, limit: 10, leaseMs: 60_000, perEndpointCap: 2 });
    expect(again!.delivery.id).toBe(out[1]!.deliveryId);
  });

  it('reports what a step after the attempt throws (an observer, a logger) as an error, and goes on', async () => {
    const memory = await seed(2);
    const errors: unknown[] = [];
    const client: DeliveryClient = {
      send: async () => ({ outcome: { ok: true, statusCode: 200 }, durationMs: 1, responseSnippet: null }),
      close: async () => undefined,
      destroy: async () => undefined,
    };
    const worker = createWorker({
      ...options(memory, client, new ManualClock(T0)),
      onAttempt: () => {
        throw new Error('observer broke');
      },
      onError: (error) => errors.push(error),
    });
    expect(await worker.tick()).toBe(2);
    expect(errors).toEqual([new Error('observer broke'), new Error('observer broke')]);
    const { items } = await memory.listDeliveries(ACCOUNT, { limit: 10 });
    expect(items.map((d) => d.status)).toEqual(['delivered', 'delivered']);
  });

  it('records nothing of a send that failed with an error (no outcome), and attempts it again once its lease lapsed', async () => {
    const memory = await seed(1);
    const clock = new ManualClock(T0);
    const errors: unknown[] = [];
    const numbers: string[] = [];
    let fail = true;
    const client: DeliveryClient = {
      async send(request) {
        numbers.push(request.headers['x-service-attempt']!);
        if (fail) throw new Error('the delivery thread stopped (exit code 1) before an answer');
        return { outcome: { ok: true, statusCode: 200 }, durationMs: 1, responseSnippet: null };
      },
      close: async () => undefined,
      destroy: async () => undefined,
    };
    const reports: string[] = [];
    const worker = createWorker({
      ...options(memory, client, clock),
      onAttempt: (report) => reports.push(made(report).applied.status ?? 'not applied'),
      onError: (error) => errors.push(error),
    });
    expect(await worker.tick()).toBe(1);
    expect(errors).toEqual([new Error('the delivery thread stopped (exit code 1) before an answer')]);
    expect(reports).toEqual([]);
    const [delivery] = (await memory.listDeliveries(ACCOUNT, { limit: 10 })).items;
    expect((await memory.getDelivery(ACCOUNT, delivery!.id))!.attempts).toEqual([]);
    // Still leased: not claimed again until the lease lapses.
    expect(await worker.tick()).toBe(0);
    clock.advance(60_000);
    fail = false;
    expect(await worker.tick()).toBe(1);
    expect(reports).toEqual(['delivered']);
    // Its first recorded attempt is number 1: the failed send used no number.
    expect(numbers).toEqual(['1', '1']);
  });

  it('asks for the next due time only when no request of its own will wake it', async () => {
    const memory = await seed(3);
    const clock = new ManualClock(T0);
    const { client, out, requests } = heldClient();
    let asked = 0;
    let askedWhenIdle: () => void = () => undefined;
    const idle = new Promise<void>((resolve) => {
      askedWhenIdle = resolve;
    });
    const store: SenderStore = {
      ...memory,
      async nextDueAt() {
        asked++;
        if (worker.inFlight === 0) askedWhenIdle();
        return memory.nextDueAt();
      },
    };
    // One endpoint at a cap of 1: every claim of 2 takes 1, with that request in flight.
    const worker = createWorker({
      ...options(store, client, clock),
      perEndpointCap: 1,
      onAttempt: () => undefined,
    });
    worker.start();
    await requests(1);
    out[0]!.answer();
    await requests(2);
    out[1]!.answer();
    await requests(3);
    expect(asked).toBe(0);
    out[2]!.answer();
    // Nothing left and nothing in flight: now it asks, to sleep until whatever falls due next.
    await idle;
    await worker.stop();
  });

  /**
   * `run` on fake timers (setTimeout only) with `seeded` deliveries due and a retryingWorker
   * started on them, through `wrap(store)` if given; every request still out is answered and the
   * worker stopped however `run` ends.
   */
  async function onFakeTimers(
    seeded: number,
    [slots, batchSize]: [number, number],
    run: (
      t: ReturnType<typeof heldClient> & ReturnType<typeof retryingWorker> & { memory: SenderStore },
    ) => Promise<void>,
    wrap: (store: SenderStore) => SenderStore = (store) => store,
  ) {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const timers = watchedTimers();
    const held = heldClient();
    let stop: () => Promise<void> = async () => undefined;
    try {
      const memory = await seed(seeded);
      const retrying = retryingWorker(
        options(wrap(memory), held.client, new ManualClock(T0)),
        slots,
        batchSize,
        timers,
      );
      stop = () => retrying.worker.stop();
      retrying.worker.start();
      await run({ ...held, ...retrying, memory });
    } finally {
      for (const request of held.out) request.answer();
      timers.restore();
      vi.useRealTimers();
      await stop();
    }
  }

  it('sleeps until each retry its own attempts scheduled while requests stay out, not until the poll', {
    timeout: 10_000,
  }, async () => {
    // Retries 5 s and 7 s away, a poll 60 s away.
    let claims = 0;
    const counted = (memory: SenderStore): SenderStore => ({
      ...memory,
      claimDue(request) {
        claims++;
        return memory.claimDue(request);
      },
      claimTurn(request) {
        claims++;
        return memory.claimTurn(request);
      },
    });
    await onFakeTimers(
      3,
      [4, 4],
      async ({ memory, worker, out, requests, recorded, advance, asleep }) => {
        await requests(3);
        // Two attempts fail, their retries due at 5 s and 7 s; the third request stays out.
        out[0]!.refuse();
        await recorded(1);
        await advance(2_000);
        out[1]!.refuse();
        await recorded(2);
        // A new delivery, claimed with a request still out: the claim takes it, and the worker sleeps
        // until the retries it scheduled itself, not until the poll.
        await publishClick(memory, 3);
        worker.wake();
        await requests(4);
        // No claim until each is due (a worker polling instead would have claimed again and again),
        // then at once.
        for (const [wait, failed, request] of [
          [3_000, 0, 5],
          [2_000, 1, 6],
        ] as const) {
          await asleep();
          const claimsBefore = claims;
          await advance(wait - 1);
          expect(claims).toBe(claimsBefore);
          await advance(1);
          await requests(request);
          expect(out[request - 1]!.deliveryId).toBe(out[failed]!.deliveryId);
        }
      },
      counted,
    );
  });

  it('asks for the next due time after a retry of its own fell due, however many claims that took', {
    timeout: 10_000,
  }, async () => {
    // Two retries due at 5 s, one at 7 s, a request out until 6 s; batches of 2, so the claim at
    // 5 s comes back full and the next one empty.
    await onFakeTimers(4, [8, 2], async ({ out, requests, recorded, advance, asleep, tracked }) => {
      await requests(4);
      out[0]!.refuse();
      out[1]!.refuse();
      await recorded(2);
      await asleep();
      await advance(2_000);
      out[2]!.refuse();
      await recorded(3);
      await asleep();
      await advance(3_000);
      await requests(6);
      expect([out[4]!.deliveryId, out[5]!.deliveryId].sort()).toEqual(
        [out[0]!.deliveryId, out[1]!.deliveryId].sort(),
      );
      // A request of its own ends before the third retry is due, others still out: the retry is
      // claimed when due all the same, not at the poll a minute later.
      await asleep();
      await advance(1_000);
      out[3]!.answer();
      await recorded(4);
      // Done with it (the wake its end brings has been given), the worker has slept again.
      await tracked(2);
      await asleep();
      await advance(1_000);
      await requests(7);
      expect(out[6]!.deliveryId).toBe(out[2]!.deliveryId);
    });
  });
});

/**
 * A worker on fake timers (setTimeout only) with `slots` of everything and retries 5 s then 10 s
 * after a failure, its lease outlasting them (the requests still out stay its own). `recorded(n)`
 * resolves once n attempts are recorded; `advance(ms)` moves the clock and the timers together;
 * `asleep()` resolves once the worker has set its sleep, the one faked timer: from then on the
 * clock may move; `tracked(n)` once the worker holds at most n attempts. Both are checked again
 * each time a timer is set or cleared (`timers`): the worker's sleep is one, and an attempt that
 * ends wakes it (clearing that timer) after it stops tracking the attempt.
 */
function retryingWorker(
  base: Omit<WorkerOptions, 'onAttempt'> & { clock: ManualClock },
  slots: number,
  batchSize: number,
  timers: ReturnType<typeof watchedTimers>,
) {
  let count = 0;
  const records = conditions();
  const worker = createWorker({
    ...base,
    concurrency: slots,
    perEndpointCap: slots,
    perAccountCap: slots,
    perOriginCap: slots,
    perAccountAtOriginCap: slots,
    batchSize,
    rules: { schedule: { delaysMs: [5_000, 10_000] }, policy: DEFAULT_DISABLE_POLICY },
    leaseMs: 600_000,
    onAttempt: () => {
      count++;
      records.changed();
    },
  });
  const { clock } = base;
  return {
    worker,
    recorded: (n: number) => records.until(() => count === n),
    advance: async (ms: number) => {
      clock.advance(ms);
      await vi.advanceTimersByTimeAsync(ms);
    },
    asleep: () => timers.until(() => vi.getTimerCount() > 0),
    tracked: (n: number) => timers.until(() => worker.inFlight <= n),
  };
}

/**
 * The faked setTimeout and clearTimeout, wrapped so that conditions waited for with `until` are
 * checked again each time a timer is set or cleared; `restore()` puts the faked ones back.
 */
function watchedTimers() {
  const timers = conditions();
  const fakeSetTimeout = globalThis.setTimeout;
  const fakeClearTimeout = globalThis.clearTimeout;
  globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
    const timer = fakeSetTimeout(...args);
    timers.changed();
    return timer;
  }) as typeof setTimeout;
  globalThis.clearTimeout = ((timer: Parameters<typeof clearTimeout>[0]) => {
    fakeClearTimeout(timer);
    timers.changed();
  }) as typeof clearTimeout;
  return {
    until: timers.until,
    restore() {
      globalThis.setTimeout = fakeSetTimeout;
      globalThis.clearTimeout = fakeClearTimeout;
    },
  };
}

/*
 * A request kept waiting a second holds no slot (slots.ts): with one slot, a second delivery goes
 * out once the first has waited HELD_SLOT_MS, not before; a request of a large body keeps its slot.
 * The worker's timers and its monotonic clock are faked together, so the second passes at once.
 */
const POLL_MS = 250;

let stop: () => Promise<void> = async () => undefined;

/** After a test with faked timers: the real ones back, and its worker stopped. */
async function realTimersAndStop() {
  vi.useRealTimers();
  await stop();
  stop = async () => undefined;
}

/** `polls` of the worker's polls, one at a time: each claim it makes is done before the next. */
async function advancePolls(polls: number) {
  for (let i = 0; i < polls; i++) await vi.advanceTimersByTimeAsync(POLL_MS);
}

/** One slot, two clicks due (the first of `firstBytes`), and a receiver that answers only when told. */
async function oneSlotTwoClicks(firstBytes: number) {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  const memory = await seed(0);
  await publishClick(memory, 0, firstBytes);
  await publishClick(memory, 1, 100);
  const sends: SendRequest[] = [];
  const answers: (() => void)[] = [];
  const sent = conditions();
  const client: DeliveryClient = {
    send(request) {
      sends.push(request);
      sent.changed();
      return new Promise<SendResult>((resolve) => {
        answers.push(() =>
          resolve({ outcome: { ok: true, statusCode: 200 }, durationMs: 1, responseSnippet: null }),
        );
      });
    },
    close: async () => undefined,
    destroy: async () => undefined,
  };
  const worker: Worker = createWorker(
    workerOptions(1, {
      queue: memory,
      client,
      clock: new ManualClock(T0),
      perEndpointCap: 2,
      perAccountCap: 2,
      perOriginCap: 2,
      perAccountAtOriginCap: 2,
      pollIntervalMs: POLL_MS,
    }),
  );
  stop = async () => {
    for (const answer of answers) answer();
    await worker.stop(0);
  };
  worker.start();
  await sent.until(() => sends.length === 1);
  return { sends, sent };
}

describe('a request kept waiting', () => {
  afterEach(realTimersAndStop);

  it('gives its slot to the next delivery once it has waited a second, not before', async () => {
    const { sends, sent } = await oneSlotTwoClicks(100);
    // Polls before the second: the one slot is the first request's.
    await advancePolls(HELD_SLOT_MS / POLL_MS - 1);
    expect(sends).toHaveLength(1);
    await advancePolls(1);
    await sent.until(() => sends.length === 2);
    expect(sends).toHaveLength(2);
  });

  it('keeps its slot when its body is large', async () => {
    const { sends } = await oneSlotTwoClicks(LARGE_BODY_BYTES + 1);
    expect(sends[0]!.body.byteLength).toBeGreaterThan(LARGE_BODY_BYTES);
    await advancePolls((4 * HELD_SLOT_MS) / POLL_MS);
    expect(sends).toHaveLength(1);
  });
});

/*
 * The accounts in turn (design D77): the worker's first claim takes them in turn, and then one
 * claim at most every ACCOUNTS_TURN_MS on its monotonic clock (or TURN_COST_SHARE times what the
 * last turn took), faked here with its timers; what a turn took counts in the shares of the claim
 * that fills the rest of the batch.
 */
describe('accounts in turn', () => {
  const answersAtOnce: DeliveryClient = {
    send: async () => ({ outcome: { ok: true, statusCode: 200 }, durationMs: 1, responseSnippet: null }),
    close: async () => undefined,
    destroy: async () => undefined,
  };

  afterEach(realTimersAndStop);

  // A turn taking `turnMs` (on the faked clock): the next comes `spacing` after its start.
  it.each([
    { turnMs: 0, spacing: ACCOUNTS_TURN_MS },
    { turnMs: 20, spacing: TURN_COST_SHARE * 20 },
    { turnMs: 100, spacing: ACCOUNTS_TURN_MAX_MS },
  ])(
    'takes them in turn at its first claim, then at most once every ACCOUNTS_TURN_MS, or TURN_COST_SHARE times what a turn took, filling the batch after (a turn of $turnMs ms)',
    async ({ turnMs, spacing }) => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
      const memory = await seed(6);
      // What each request's shares said of the account when it was made (the maps change after).
      // `after`: a turn's cursor, undefined for a claim in due order.
      const claims: { request: ClaimRequest; after?: string; openOfAccount: number }[] = [];
      const claimed = conditions();
      const openOfAccount = (request: ClaimRequest) => request.shares?.openByAccount.get(ACCOUNT) ?? 0;
      const queue: SenderStore = {
        ...memory,
        async claimDue(request) {
          const open = openOfAccount(request);
          const took = await memory.claimDue(request);
          claims.push({ request, openOfAccount: open });
          claimed.changed();
          return took;
        },
        async claimTurn(request) {
          const open = openOfAccount(request);
          vi.advanceTimersByTime(turnMs);
          // A turn that takes one only: the claim after it takes the rest of the batch.
          const taken = await memory.claimTurn({ ...request, limit: 1 });
          claims.push({ request, after: request.after, openOfAccount: open });
          claimed.changed();
          return taken;
        },
      };
      let delivered = 0;
      const worker = createWorker(
        workerOptions(4, {
          queue,
          client: answersAtOnce,
          clock: new ManualClock(T0),
          onAttempt: () => {
            delivered++;
            claimed.changed();
          },
        }),
      );
      stop = () => worker.stop(0);
      worker.start();
      await claimed.until(() => delivered === 6);
      const inTurn = () => claims.map((c) => c.after !== undefined);
      // The first claim in turn (one taken), the rest of its batch in due order with that one counted
      // in the account's share; then in due order only, the clock not having moved.
      expect(inTurn().slice(0, 2)).toEqual([true, false]);
      expect(claims[1]!.request.limit).toBe(3);
      expect(claims[0]!.openOfAccount).toBe(0);
      expect(claims[1]!.openOfAccount).toBe(1);
      expect(
        inTurn()
          .slice(2)
          .every((turn) => !turn),
      ).toBe(true);
      // Less than `spacing` after the turn began: a claim for new work is in due order.
      const before = claims.length;
      await vi.advanceTimersByTimeAsync(spacing - turnMs - 1);
      await publishClick(memory, 6);
      worker.wake();
      await claimed.until(() => delivered === 7);
      expect(inTurn().slice(before)).not.toContain(true);
      // `spacing` on: the next claim takes the accounts in turn again.
      const after = claims.length;
      await vi.advanceTimersByTimeAsync(1);
      await publishClick(memory, 7);
      worker.wake();
      await claimed.until(() => delivered === 8);
      expect(inTurn().slice(after)).toContain(true);
      // The first turn starts from the first account on; the next after the one the first took.
      const turns = claims.filter((c) => c.after !== undefined);
      expect(turns.slice(0, 2).map((c) => c.after)).toEqual(['', ACCOUNT]);
    },
  );

  it('starts its next turn at the cursor the store answered for the turn before', async () => {
    vi.useFakeTimers({ toFake: ['performance'] }); // each turn when the test says
    const memory = await seed(2);
    const afters: string[] = [];
    const queue: SenderStore = {
      ...memory,
      claimTurn: async (request) => {
        afters.push(request.after);
        return { ...(await memory.claimTurn(request)), next: 'acct_zz' };
      },
    };
    const worker = createWorker(
      workerOptions(4, { queue, client: answersAtOnce, clock: new ManualClock(T0) }),
    );
    expect(await worker.tick()).toBe(2);
    vi.advanceTimersByTime(ACCOUNTS_TURN_MAX_MS);
    await publishClick(memory, 2);
    expect(await worker.tick()).toBe(1);
    // Not the account the first turn took (the last in its turn order): the store's cursor.
    expect(afters).toEqual(['', 'acct_zz']);
  });

  it('claims in due order all the same when the claim with the accounts in turn fails, and reports its error', async () => {
    vi.useFakeTimers({ toFake: ['performance'] }); // one turn only, however long the test takes
    const memory = await seed(3);
    const failure = new Error('the turn failed');
    const queue: SenderStore = {
      ...memory,
      claimTurn: () => Promise.reject(failure),
    };
    const errors: unknown[] = [];
    const worker = createWorker(
      workerOptions(4, {
        queue,
        client: answersAtOnce,
        clock: new ManualClock(T0),
        onError: (error) => errors.push(error),
      }),
    );
    expect(await worker.tick()).toBe(3);
    expect(errors).toEqual([failure]);
  });

  it('makes no claim in due order after a turn the store could not answer, which would wait as long', async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const memory = await seed(3);
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const kinds: boolean[] = [];
    const queue: SenderStore = {
      ...memory,
      claimDue: (request) => {
        kinds.push(false);
        return memory.claimDue(request);
      },
      claimTurn: () => {
        kinds.push(true);
        return Promise.reject(refused);
      },
    };
    const worker = createWorker(
      workerOptions(4, { queue, client: answersAtOnce, clock: new ManualClock(T0) }),
    );
    await expect(worker.tick()).rejects.toBe(refused);
    expect(kinds).toEqual([true]);
  });
});
