/**
 * A publish lets its input go once its event is built (design D61): while the store is still
 * writing, the parsed events of a batch are garbage, not copied by every young-generation
 * collection until the commit. Each event's data is watched with a FinalizationRegistry while the
 * store holds every write back, through `publishMany` and through the batch ingest route, which
 * lets each slice go once it is published and answers only once every publish it made has settled.
 * On a store that commits in this process the route has two slices in flight at most; on one a
 * network round trip away, every slice.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { sampleEventData } from '@linkhooks/protocol';
import { afterEach, expect, it } from 'vitest';
import { createAccount } from '../src/accounts.js';
import { createIngest } from '../src/api/ingest.js';
import type { RouteContext } from '../src/api/route.js';
import { ingestBatchRoute } from '../src/api/routes/ingest.js';
import { createSender, type Sender } from '../src/engine/sender.js';
import { createMemoryStore } from '../src/store/memory-store.js';
import type { SenderStore } from '../src/store/port.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const EVENTS = 120;

/**
 * A memory store whose publishes wait until `release()`; `publishes` counts those called. By
 * default it declares its writes network round trips, as PostgreSQL's are, so the batch route
 * publishes every slice of a batch without waiting for the ones before; with `overNetwork: false`
 * the route waits as on SQLite. With `breakFirst`, the first publish throws at once. With
 * `lateFrom`, publishes after that many wait for `releaseLate()` instead.
 */
function heldStore({ overNetwork = true, breakFirst = false, lateFrom = Number.POSITIVE_INFINITY } = {}) {
  const inner = createMemoryStore();
  const gate = () => {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    return { open, opened };
  };
  const early = gate();
  const late = gate();
  const held = { publishes: 0, stored: 0, release: early.open, releaseLate: late.open };
  const store: SenderStore = {
    ...inner,
    capabilities: { ...inner.capabilities, recordsOverNetwork: overNetwork },
    async publish(...args) {
      held.publishes++;
      if (breakFirst && held.publishes === 1) throw new Error('the disk broke');
      await (held.publishes > lateFrom ? late.opened : early.opened);
      const published = await inner.publish(...args);
      held.stored++;
      return published;
    },
  };
  return { store, held };
}

/** Watches objects; `collected()` after a full collection says how many are gone. */
function watcher() {
  let gone = 0;
  const registry = new FinalizationRegistry<number>(() => {
    gone++;
  });
  return {
    watch<T extends object>(value: T): T {
      registry.register(value, 0);
      return value;
    },
    async collected() {
      for (let i = 0; i < 3; i++) {
        gc();
        await nextTurn(); // finalization callbacks run in a later task
      }
      return gone;
    },
  };
}

const waitFor = async (done: () => boolean) => {
  for (let turns = 0; !done(); turns++) {
    if (turns > 100_000) throw new Error('the publishes never reached the store');
    await nextTurn();
  }
};

/** An ingest item: a click for the account. */
const clickEvent = (accountId: string, clickId: string) => ({
  account_id: accountId,
  event: 'click',
  data: { ...sampleEventData('click'), click_id: clickId },
});

let sender: Sender | undefined;
afterEach(async () => {
  await sender?.stop(0);
  sender = undefined;
});

it('publishMany holds no item’s data while the store writes', async () => {
  const { store, held } = heldStore();
  sender = createSender({ store, allowPrivateNetworks: true });
  const { account } = await createAccount(store, { name: 'Retention', plan: 'business' });
  const seen = watcher();
  const outcome = sender.publishMany(
    Array.from({ length: EVENTS }, (_, i) => ({
      accountId: account.id,
      event: 'click' as const,
      data: seen.watch({ ...sampleEventData('click'), click_id: `keep-${i}` }),
    })),
  );
  await waitFor(() => held.publishes === EVENTS);
  expect(await seen.collected()).toBe(EVENTS);
  held.release();
  const results = await outcome;
  expect(results.filter((r) => r.ok)).toHaveLength(EVENTS);
});

it('the batch route holds no event’s data while the store writes, and answers each in order', async () => {
  const { store, held } = heldStore();
  sender = createSender({ store, allowPrivateNetworks: true });
  const { account } = await createAccount(store, { name: 'Retention', plan: 'business' });
  const seen = watcher();
  const events: unknown[] = Array.from({ length: EVENTS }, (_, i) =>
    seen.watch({
      account_id: account.id,
      event: 'click',
      data: seen.watch({ ...sampleEventData('click'), click_id: `route-${i}` }),
    }),
  );
  events.splice(7, 0, { account_id: account.id, event: 'nope', data: {} });
  const ctx = { sender, ingest: createIngest(sender), body: { events } } as unknown as RouteContext<
    unknown,
    unknown
  >;
  const answer = ingestBatchRoute.handle(ctx);
  await waitFor(() => held.publishes === EVENTS);
  expect(await seen.collected()).toBe(2 * EVENTS);
  held.release();
  const result = await answer;
  expect(result.status).toBe(202);
  const { results } = (result as { json: { results: { status: number }[] } }).json;
  expect(results.map((r) => r.status)).toEqual(
    Array.from({ length: EVENTS + 1 }, (_, i) => (i === 7 ? 400 : 202)),
  );
});

it('the batch route lets a slice’s data go once it is published, before later slices are checked', async () => {
  const { store, held } = heldStore();
  const running = createSender({ store, allowPrivateNetworks: true });
  sender = running;
  const { account } = await createAccount(store, { name: 'Early', plan: 'business' });
  const { account: late } = await createAccount(store, { name: 'Late', plan: 'business' });
  // The late account's lookup waits until the test lets it: the batch's last slice is being checked.
  let lookUp!: () => void;
  const lookedUp = new Promise<void>((resolve) => {
    lookUp = resolve;
  });
  let lateChecked = false;
  const ingest = createIngest({
    getAccount: async (id) => {
      if (id === late.id) {
        lateChecked = true;
        await lookedUp;
      }
      return running.getAccount(id);
    },
  });
  const seen = watcher();
  const early = 100; // two slices of the route's checks
  const events: unknown[] = [
    ...Array.from({ length: early }, (_, i) => {
      const e = clickEvent(account.id, `early-${i}`);
      seen.watch(e.data);
      return e;
    }),
    ...Array.from({ length: 20 }, (_, i) => clickEvent(late.id, `late-${i}`)),
  ];
  const ctx = { sender, ingest, body: { events } } as unknown as RouteContext<unknown, unknown>;
  const answer = ingestBatchRoute.handle(ctx);
  await waitFor(() => lateChecked && held.publishes === early);
  expect(await seen.collected()).toBe(early);
  lookUp();
  held.release();
  const result = await answer;
  const { results } = (result as { json: { results: { status: number }[] } }).json;
  expect(results.map((r) => r.status)).toEqual(Array.from({ length: early + 20 }, () => 202));
});

it.each([
  ['over the network', true],
  ['committing in this process', false],
])(
  'the batch route fails on a check that breaks only once the slices it published have settled (a store %s)',
  async (_, overNetwork) => {
    const { store, held } = heldStore({ overNetwork });
    const running = createSender({ store, allowPrivateNetworks: true });
    sender = running;
    const { account } = await createAccount(store, { name: 'Early', plan: 'business' });
    const ingest = createIngest({
      getAccount: async (id) => {
        if (id === 'acct_broken') throw new Error('the lookup broke');
        return running.getAccount(id);
      },
    });
    const events: unknown[] = [
      ...Array.from({ length: 100 }, (_, i) => clickEvent(account.id, `early-${i}`)),
      clickEvent('acct_broken', 'late'),
    ];
    const ctx = { sender, ingest, body: { events } } as unknown as RouteContext<unknown, unknown>;
    // How many of the held publishes had been stored when the request failed.
    let storedWhenAnswered = -1;
    const answer = ingestBatchRoute.handle(ctx).finally(() => {
      storedWhenAnswered = held.stored;
    });
    await waitFor(() => held.publishes === 100);
    held.release();
    await expect(answer).rejects.toThrow('the lookup broke');
    expect(storedWhenAnswered).toBe(100);
  },
);

/**
 * A batch of `size` clicks to a held store whose first publish throws; `storedWhenAnswered()` is how
 * many publishes had been stored when the route answered.
 */
async function brokenBatch(size: number, options: { overNetwork?: boolean; lateFrom?: number }) {
  const { store, held } = heldStore({ ...options, breakFirst: true });
  sender = createSender({ store, allowPrivateNetworks: true });
  const { account } = await createAccount(store, { name: 'Broken', plan: 'business' });
  let stored = -1;
  const answer = ingestBatchRoute.handle(batchOfClicks(sender, account.id, size)).finally(() => {
    stored = held.stored;
  });
  answer.catch(() => undefined); // awaited by the test, after it releases the store
  return { held, answer, storedWhenAnswered: () => stored };
}

it.each([
  ['over the network', true],
  ['committing in this process', false],
])(
  'a publish that breaks fails the batch only once its other publishes have settled (a store %s)',
  async (_, overNetwork) => {
    const { held, answer, storedWhenAnswered } = await brokenBatch(50, { overNetwork });
    await waitFor(() => held.publishes === 50);
    held.release();
    await expect(answer).rejects.toThrow('the disk broke');
    expect(storedWhenAnswered()).toBe(49);
  },
);

it('a batch over the network whose first slice breaks fails only once its later slices are stored', async () => {
  const { held, answer, storedWhenAnswered } = await brokenBatch(100, { lateFrom: 50 });
  await waitFor(() => held.publishes === 100);
  held.release(); // the first slice's: it fails once its 49 others are stored
  await waitFor(() => held.stored === 49);
  held.releaseLate();
  await expect(answer).rejects.toThrow('the disk broke');
  expect(storedWhenAnswered()).toBe(99);
});

/**
 * A memory store whose publishes go through one a turn of the event loop, slower than the route
 * checks a slice: `maxWaiting` is the most publishes waiting at once.
 */
function tricklingStore(overNetwork: boolean) {
  const inner = createMemoryStore();
  const waiting: (() => void)[] = [];
  const trickle = { maxWaiting: 0, flowing: true };
  const store: SenderStore = {
    ...inner,
    capabilities: { ...inner.capabilities, recordsOverNetwork: overNetwork },
    async publish(...args) {
      await new Promise<void>((resolve) => {
        waiting.push(resolve);
        trickle.maxWaiting = Math.max(trickle.maxWaiting, waiting.length);
      });
      return inner.publish(...args);
    },
  };
  const flow = async () => {
    while (trickle.flowing) {
      waiting.shift()?.();
      await nextTurn();
    }
  };
  return { store, trickle, flow };
}

/** The batch route's context for `size` clicks to one account. */
function batchOfClicks(sender: Sender, accountId: string, size: number) {
  const events = Array.from({ length: size }, (_, i) => clickEvent(accountId, `batch-${i}`));
  return { sender, ingest: createIngest(sender), body: { events } } as unknown as RouteContext<
    unknown,
    unknown
  >;
}

async function batchThroughTrickle(overNetwork: boolean, size: number) {
  const { store, trickle, flow } = tricklingStore(overNetwork);
  sender = createSender({ store, allowPrivateNetworks: true });
  const { account } = await createAccount(store, { name: 'Trickle', plan: 'business' });
  const flowing = flow();
  const result = await ingestBatchRoute.handle(batchOfClicks(sender, account.id, size)).finally(() => {
    trickle.flowing = false;
  });
  await flowing;
  const { results } = (result as { json: { results: { status: number }[] } }).json;
  return { statuses: results.map((r) => r.status), maxWaiting: trickle.maxWaiting };
}

it('on a store that commits in this process, a batch has at most two slices waiting on it', async () => {
  const { statuses, maxWaiting } = await batchThroughTrickle(false, 500);
  expect(statuses).toEqual(Array.from({ length: 500 }, () => 202));
  expect(maxWaiting).toBeGreaterThan(50); // two slices overlap
  expect(maxWaiting).toBeLessThanOrEqual(100);
});

it('on a store a network round trip away, every slice of a batch is published at once', async () => {
  const { statuses, maxWaiting } = await batchThroughTrickle(true, 500);
  expect(statuses).toEqual(Array.from({ length: 500 }, () => 202));
  expect(maxWaiting).toBeGreaterThan(100);
});

it('on a store that commits in this process, a publish that breaks stops the batch', async () => {
  const inner = createMemoryStore();
  let publishes = 0;
  const store: SenderStore = {
    ...inner,
    async publish() {
      publishes++;
      throw new Error('the disk broke');
    },
  };
  sender = createSender({ store, allowPrivateNetworks: true });
  const { account } = await createAccount(store, { name: 'Broken', plan: 'business' });
  await expect(ingestBatchRoute.handle(batchOfClicks(sender, account.id, 500))).rejects.toThrow(
    'the disk broke',
  );
  expect(publishes).toBe(100); // the first two slices; the third waits for the first, which failed
});
