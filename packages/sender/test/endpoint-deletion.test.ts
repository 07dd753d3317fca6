/**
 * Deleting an endpoint of many deliveries (design D78), through the engine: its deliveries go in
 * bounded steps with the event loop free between them, other tenants' publishes are served during
 * the deletion, and a deletion cut short is finished by the next DELETE or by the log's pruning.
 * On SQLite and PostgreSQL.
 */
import { sampleEventData } from '@linkhooks/protocol';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../src/clock.js';
import { DELETE_STEP } from '../src/engine/account-admin.js';
import { endpointDeletion } from '../src/engine/endpoint-deletion.js';
import { createSender } from '../src/engine/sender.js';
import { isSenderError } from '../src/errors.js';
import { createMemoryStore } from '../src/store/memory-store.js';
import type { SenderStore } from '../src/store/port.js';
import { createPostgresStore } from '../src/store/postgres/postgres-store.js';
import { stepTurns } from '../src/store/step-turns.js';
import { storeEndpoint } from './helpers/endpoints.js';
import { pgSchemas } from './helpers/pg-schemas.js';
import { PG_URL, requireService } from './helpers/services.js';

/** More deliveries than two steps take at most: the deletion needs three or more on either store. */
const DELIVERIES = 2 * DELETE_STEP + 500;
const click = { event: 'click' as const, data: sampleEventData('click') };

/**
 * The store with each step of a deletion counted (the limit it was asked for, what it removed), and
 * what ran on the event loop before each; `holdSecondStep` keeps the second step from starting
 * until `release` is called.
 */
function watchedSteps(store: SenderStore, { holdSecondStep = false } = {}) {
  const steps: { limit: number; removed: number; turnsBefore: number }[] = [];
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let reachHold = () => {};
  /** Resolves once the second step has been asked for and waits to be released. */
  const holding = new Promise<void>((resolve) => {
    reachHold = resolve;
  });
  let turns = 0;
  let watching = true;
  const tick = () => {
    turns++;
    if (watching) setImmediate(tick);
  };
  setImmediate(tick);
  let onStep: (() => void) | undefined;
  const watched: SenderStore = {
    ...store,
    async deleteEndpointStep(accountId, id, limit) {
      if (holdSecondStep && steps.length === 1) {
        reachHold();
        await held;
      }
      steps.push({ limit, removed: 0, turnsBefore: turns });
      onStep?.();
      const removed = await store.deleteEndpointStep(accountId, id, limit);
      steps[steps.length - 1]!.removed = removed;
      return removed;
    },
  };
  return {
    watched,
    steps,
    release,
    holding,
    onFirstStep(run: () => void) {
      onStep = () => {
        onStep = undefined;
        run();
      };
    },
    stop: () => {
      watching = false;
    },
  };
}

/** Two endpoints of the account subscribed to clicks: the one a test deletes, and one it keeps. */
const twoEndpoints = async (store: SenderStore, accountId: string) => ({
  doomed: await storeEndpoint(store, accountId, `ep_${accountId}_doomed`, Date.now()),
  kept: await storeEndpoint(store, accountId, `ep_${accountId}_kept`, Date.now()),
});

/**
 * How many of the account's deliveries the endpoint still has: read from the account's log, not
 * filtered by the endpoint, which passes over a marked endpoint's.
 */
const deliveriesLeft = async (store: SenderStore, accountId: string, endpointId: string) =>
  (await store.listDeliveries(accountId, { limit: 5_000 })).items.filter((d) => d.endpointId === endpointId)
    .length;

function deletionSuite(name: string, open: () => Promise<SenderStore>) {
  describe(`${name}: deleting an endpoint of many deliveries`, () => {
    it('removes them in bounded steps, the event loop free between steps, and serves another tenant’s publish meanwhile', async () => {
      const store = await open();
      const probe = watchedSteps(store);
      const sender = createSender({ store: probe.watched });
      try {
        const { doomed, kept } = await twoEndpoints(store, 'acct_doomed');
        await twoEndpoints(store, 'acct_other');
        const made = await sender.publishMany(
          Array.from({ length: DELIVERIES }, () => ({ accountId: 'acct_doomed', ...click })),
        );
        expect(made.every((r) => r.ok)).toBe(true);
        const doomedIds = made.flatMap((r) =>
          r.ok ? r.result.deliveries.filter((d) => d.endpointId === doomed.id).map((d) => d.id) : [],
        );
        expect(doomedIds).toHaveLength(DELIVERIES);

        // Another tenant publishes once the deletion has begun: served before the deletion ends.
        let servedAtStep = -1;
        let other: Promise<unknown> | undefined;
        probe.onFirstStep(() => {
          other = sender.publish('acct_other', click).then(() => {
            servedAtStep = probe.steps.length;
          });
        });
        await sender.deleteEndpoint('acct_doomed', doomed.id);
        await other;
        probe.stop();

        const removed = probe.steps.map((s) => s.removed);
        expect(removed.reduce((a, b) => a + b, 0)).toBe(DELIVERIES);
        expect(probe.steps.every((s) => s.limit === DELETE_STEP && s.removed <= s.limit)).toBe(true);
        expect(removed.filter((n) => n > 0).length).toBeGreaterThanOrEqual(3);
        expect(removed.at(-1)).toBe(0);
        // Every step after the first began on a later turn of the event loop than the one before
        // (what shows it on SQLite, whose steps are synchronous: PostgreSQL's wait on the network).
        for (let i = 1; i < probe.steps.length; i++) {
          expect(probe.steps[i]!.turnsBefore).toBeGreaterThan(probe.steps[i - 1]!.turnsBefore);
        }
        expect(servedAtStep).toBeGreaterThan(0);
        expect(servedAtStep).toBeLessThan(probe.steps.length);

        expect((await store.listEndpoints('acct_doomed')).map((e) => e.id)).toEqual([kept.id]);
        expect(await store.endpointsBeingDeleted(10)).toEqual([]);
        // Not found now, where a marked endpoint would be deleted again: its row is gone.
        await expect(sender.deleteEndpoint('acct_doomed', doomed.id)).rejects.toSatisfy(
          (e) => isSenderError(e) && e.code === 'not_found',
        );
      } finally {
        probe.stop();
        await sender.stop(0);
        await store.close();
      }
    });

    it('finishes a deletion cut short: by the next DELETE of the endpoint, or by the pruning of the log', async () => {
      const store = await open();
      const sender = createSender({ store });
      try {
        const first = await twoEndpoints(store, 'acct_cut');
        const second = await twoEndpoints(store, 'acct_cut2');
        for (const accountId of ['acct_cut', 'acct_cut2']) await sender.publish(accountId, click);
        // As a process stopped after the mark: marked, its deliveries still there.
        for (const { doomed } of [first, second]) {
          expect(await store.markEndpointDeleted(doomed.accountId, doomed.id, Date.now())).toBe(true);
        }
        const left = (accountId: string, endpointId: string) => deliveriesLeft(store, accountId, endpointId);
        expect(await left('acct_cut', first.doomed.id)).toBe(1);
        expect(await sender.getEndpoint('acct_cut', first.doomed.id).catch((e) => e.code)).toBe('not_found');

        // The DELETE again finishes it (204, not 404).
        await sender.deleteEndpoint('acct_cut', first.doomed.id);
        expect(await left('acct_cut', first.doomed.id)).toBe(0);
        // The pruning finishes the other.
        expect(await left('acct_cut2', second.doomed.id)).toBe(1);
        await sender.pruneLog();
        expect(await left('acct_cut2', second.doomed.id)).toBe(0);
        expect(await store.endpointsBeingDeleted(100)).toEqual([]);
        expect((await store.listEndpoints('acct_cut2')).map((e) => e.id)).toEqual([second.kept.id]);
      } finally {
        await sender.stop(0);
        await store.close();
      }
    });
  });
}

describe('an endpoint deletion longer than a request should wait', () => {
  const DOOMED = 1_000;
  /** A memory store whose endpoint has DOOMED deliveries, its deletion's second step held (watchedSteps). */
  const deletingOne = async () => {
    const store = createMemoryStore();
    const { doomed } = await twoEndpoints(store, 'acct_long');
    const sender = createSender({ store });
    const published = await sender.publishMany(
      Array.from({ length: DOOMED }, () => ({ accountId: 'acct_long', ...click })),
    );
    expect(published.every((r) => r.ok)).toBe(true);
    await sender.stop(0);
    const probe = watchedSteps(store, { holdSecondStep: true });
    const deletion = endpointDeletion({
      store: probe.watched,
      clock: systemClock,
      logger: pino({ enabled: false }),
      turns: stepTurns(1),
      answerWithinMs: 0,
    });
    const left = () => deliveriesLeft(store, 'acct_long', doomed.id);
    const removed = () => probe.steps.reduce((n, s) => n + s.removed, 0);
    return { store, doomed, probe, deletion, left, removed };
  };

  it('is answered when its time is up, the endpoint gone for every route, and its deliveries go on in the background', async () => {
    const { store, doomed, probe, deletion, left, removed } = await deletingOne();
    try {
      expect(await deletion.deleteEndpoint('acct_long', doomed.id)).toBe(true);
      // Answered, and going on: the second step is held, the first has removed some.
      await probe.holding;
      expect(probe.steps).toHaveLength(1);
      expect(probe.steps[0]!.removed).toBeGreaterThan(0);
      expect(await store.getEndpoint('acct_long', doomed.id)).toBeNull();
      expect(await left()).toBe(DOOMED - removed());
      probe.release();
      await deletion.idle();
      expect(await left()).toBe(0);
      expect(await store.endpointsBeingDeleted(10)).toEqual([]);
    } finally {
      probe.stop();
      await store.close();
    }
  });

  it('stops after its current step when the engine stops, and the next prune finishes it', async () => {
    const { store, doomed, probe, deletion, left, removed } = await deletingOne();
    try {
      await deletion.deleteEndpoint('acct_long', doomed.id);
      await probe.holding;
      const stopped = deletion.stop();
      probe.release(); // the step under way ends; no other begins
      await stopped;
      expect(probe.steps).toHaveLength(2);
      expect(await left()).toBe(DOOMED - removed());
      expect(await left()).toBeGreaterThan(0);
      expect(await store.endpointsBeingDeleted(10)).toEqual([{ accountId: 'acct_long', id: doomed.id }]);
      expect(await deletion.finishEndpointDeletions()).toBe(1);
      expect(await left()).toBe(0);
      expect(await store.endpointsBeingDeleted(10)).toEqual([]);
    } finally {
      probe.stop();
      await store.close();
    }
  });
});

deletionSuite('sqlite', async () => createMemoryStore());

const pgUp = await requireService('PostgreSQL', PG_URL);
const schemas = pgSchemas('lh_epdel');
afterAll(schemas.drop);
if (pgUp) {
  deletionSuite('postgres', async () => {
    const store = createPostgresStore({ connectionString: PG_URL, schema: schemas.fresh(), poolSize: 4 });
    await store.migrate();
    return store;
  });

  describe('postgres: two deletions of one endpoint at once', () => {
    it('each goes in steps to the end: neither ends with the endpoint’s deliveries left for its last transaction', async () => {
      const schema = schemas.fresh();
      // As two service processes on one database, or a DELETE repeated while the first runs.
      const stores = [0, 1].map(() => createPostgresStore({ connectionString: PG_URL, schema, poolSize: 4 }));
      await stores[0]!.migrate();
      const leftAtLast: number[] = [];
      // Both marked before either goes on: otherwise the first could end before the second looks,
      // which then finds no endpoint (a connection of a fresh pool takes that long on a busy machine).
      let marked = 0;
      let bothMarked = () => {};
      const both = new Promise<void>((resolve) => {
        bothMarked = resolve;
      });
      const senders = stores.map((store) =>
        createSender({
          store: {
            ...store,
            async markEndpointDeleted(accountId, id, now) {
              const found = await store.markEndpointDeleted(accountId, id, now);
              if (++marked === 2) bothMarked();
              await both;
              return found;
            },
            async deleteEndpoint(accountId, id) {
              const { rows } = await schemas.admin.query<{ n: number }>(
                `SELECT count(*)::int AS n FROM "${schema}".deliveries WHERE endpoint_id = $1`,
                [id],
              );
              leftAtLast.push(rows[0]!.n);
              return store.deleteEndpoint(accountId, id);
            },
          },
        }),
      );
      try {
        const { doomed } = await twoEndpoints(stores[0]!, 'acct_twice');
        const made = await senders[0]!.publishMany(
          Array.from({ length: DELIVERIES }, () => ({ accountId: 'acct_twice', ...click })),
        );
        expect(made.every((r) => r.ok)).toBe(true);
        await Promise.all(senders.map((sender) => sender.deleteEndpoint('acct_twice', doomed.id)));
        expect(leftAtLast).toEqual([0, 0]);
        expect(await stores[0]!.endpointsBeingDeleted(10)).toEqual([]);
      } finally {
        for (const sender of senders) await sender.stop(0);
        for (const store of stores) await store.close();
      }
    });
  });
}
