/**
 * Deleting an endpoint of many deliveries (design D78), through the engine: its deliveries go in
 * bounded steps with the event loop free between them, other tenants' publishes are served during
 * the deletion, and a deletion cut short is finished by the next DELETE or by the log's pruning.
 * On SQLite and PostgreSQL.
 */
import { sampleEventData } from '@linkhooks/protocol';
import pg from 'pg';
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
import { pgSchemas } from './helpers/pg-schemas.js';
import { PG_URL, requireService } from './helpers/services.js';

/** More deliveries than two steps take: the deletion needs three or more. */
const DELIVERIES = 2 * DELETE_STEP + 500;
const click = { event: 'click' as const, data: sampleEventData('click') };

/** The store with each step of a deletion counted, and what ran on the event loop before each. */
function watchedSteps(store: SenderStore) {
  const steps: { removed: number; turnsBefore: number }[] = [];
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
      steps.push({ removed: 0, turnsBefore: turns });
      onStep?.();
      const removed = await store.deleteEndpointStep(accountId, id, limit);
      steps[steps.length - 1]!.removed = removed;
      return removed;
    },
  };
  return {
    watched,
    steps,
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

async function endpointWithDeliveries(store: SenderStore, accountId: string, events: string[]) {
  const at = Date.now();
  const endpoint = async (n: number) =>
    store.createEndpoint({
      id: `ep_${accountId}_${n}`,
      accountId,
      url: `https://receiver${n}.example.com/hook`,
      events: events as never,
      secret: 'whsec_test',
      description: null,
      now: at,
    });
  return { doomed: await endpoint(1), kept: await endpoint(2) };
}

function deletionSuite(name: string, open: () => Promise<SenderStore>) {
  describe(`${name}: deleting an endpoint of many deliveries`, () => {
    it('removes them in bounded steps, the event loop free between steps, and serves another tenant’s publish meanwhile', async () => {
      const store = await open();
      const probe = watchedSteps(store);
      const sender = createSender({ store: probe.watched });
      try {
        const { doomed, kept } = await endpointWithDeliveries(store, 'acct_doomed', ['click']);
        await endpointWithDeliveries(store, 'acct_other', ['click']);
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
        expect(removed.every((n) => n <= DELETE_STEP)).toBe(true);
        expect(removed.at(-1)).toBe(0);
        // Every step after the first began on a later turn of the event loop than the one before.
        for (let i = 1; i < probe.steps.length; i++) {
          expect(probe.steps[i]!.turnsBefore).toBeGreaterThan(probe.steps[i - 1]!.turnsBefore);
        }
        expect(servedAtStep).toBeGreaterThan(0);
        expect(servedAtStep).toBeLessThan(probe.steps.length);

        for (const id of [doomedIds[0]!, doomedIds.at(-1)!]) {
          expect(await store.getDelivery('acct_doomed', id)).toBeNull();
        }
        expect(await store.getEndpoint('acct_doomed', doomed.id)).toBeNull();
        expect((await store.listEndpoints('acct_doomed')).map((e) => e.id)).toEqual([kept.id]);
        const page = await store.listDeliveries('acct_doomed', { limit: 1_000 });
        expect(page.items.every((d) => d.endpointId === kept.id)).toBe(true);
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
        const first = await endpointWithDeliveries(store, 'acct_cut', ['click']);
        const second = await endpointWithDeliveries(store, 'acct_cut2', ['click']);
        for (const accountId of ['acct_cut', 'acct_cut2']) await sender.publish(accountId, click);
        // As a process stopped after the mark: marked, its deliveries still there.
        for (const { doomed } of [first, second]) {
          expect(await store.markEndpointDeleted(doomed.accountId, doomed.id, Date.now())).toBe(true);
        }
        const left = async (accountId: string, endpointId: string) =>
          (await store.listDeliveries(accountId, { limit: 100 })).items.filter(
            (d) => d.endpointId === endpointId,
          ).length;
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
  const made = async (store: SenderStore) => {
    const { doomed } = await endpointWithDeliveries(store, 'acct_long', ['click']);
    const sender = createSender({ store });
    const published = await sender.publishMany(
      Array.from({ length: 1_000 }, () => ({ accountId: 'acct_long', ...click })),
    );
    expect(published.every((r) => r.ok)).toBe(true);
    await sender.stop(0);
    const left = async () =>
      (await store.listDeliveries('acct_long', { limit: 5_000 })).items.filter(
        (d) => d.endpointId === doomed.id,
      ).length;
    return { doomed, left };
  };
  const logger = pino({ enabled: false });

  it('is answered when its time is up, the endpoint gone for every route, and its deliveries go on in the background', async () => {
    const store = createMemoryStore();
    const { doomed, left } = await made(store);
    const deletion = endpointDeletion({ store, clock: systemClock, logger, answerWithinMs: 0 });
    expect(await deletion.deleteEndpoint('acct_long', doomed.id)).toBe(true);
    expect(await store.getEndpoint('acct_long', doomed.id)).toBeNull();
    expect(await left()).toBeGreaterThan(0);
    await deletion.idle();
    expect(await left()).toBe(0);
    expect(await store.endpointsBeingDeleted(10)).toEqual([]);
    await store.close();
  });

  it('stops after its current step when the engine stops, and the next prune finishes it', async () => {
    const store = createMemoryStore();
    const { doomed, left } = await made(store);
    const deletion = endpointDeletion({ store, clock: systemClock, logger, answerWithinMs: 0 });
    await deletion.deleteEndpoint('acct_long', doomed.id);
    await deletion.stop();
    expect(await left()).toBeGreaterThan(0);
    expect(await store.endpointsBeingDeleted(10)).toEqual([{ accountId: 'acct_long', id: doomed.id }]);
    expect(await deletion.finishEndpointDeletions()).toBe(1);
    expect(await left()).toBe(0);
    expect(await store.endpointsBeingDeleted(10)).toEqual([]);
    await store.close();
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
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      // As two service processes on one database, or a DELETE repeated while the first runs.
      const stores = [0, 1].map(() => createPostgresStore({ connectionString: PG_URL, schema, poolSize: 4 }));
      await stores[0]!.migrate();
      const leftAtLast: number[] = [];
      const senders = stores.map((store) =>
        createSender({
          store: {
            ...store,
            async deleteEndpoint(accountId, id) {
              const { rows } = await admin.query<{ n: number }>(
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
        const { doomed } = await endpointWithDeliveries(stores[0]!, 'acct_twice', ['click']);
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
        await admin.end();
      }
    });
  });
}
