/**
 * A pause, a resume, a re-enabling and an automatic disabling move an endpoint's deliveries in
 * bounded steps (design D34): the change and the first step in one transaction, the rest a step at
 * a time. Meanwhile claims pass over what a disabled or paused endpoint has not had held yet, a
 * change made midway turns the steps around, and moves cut short are finished by the pruning. On
 * SQLite and PostgreSQL.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sampleEventData } from '@linkhooks/protocol';
import pg from 'pg';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../src/clock.js';
import { queueSettling } from '../src/engine/queue-settling.js';
import { createSender } from '../src/engine/sender.js';
import type { SenderStore } from '../src/store/port.js';
import { createPostgresStore } from '../src/store/postgres/postgres-store.js';
import { PRUNE_STEP } from '../src/store/prune-steps.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { STEPS_AT_ONCE_OVER_NETWORK, stepTurns } from '../src/store/step-turns.js';
import { storeEndpoint } from './helpers/endpoints.js';
import { pgSchemas } from './helpers/pg-schemas.js';
import { DEFAULT_RULES, recordAnswer } from './helpers/record-answer.js';
import { PG_URL, requireService } from './helpers/services.js';

/** More deliveries than two of the larger steps take: three steps or more on either store. */
const DELIVERIES = 2 * PRUNE_STEP + 500;
const click = { event: 'click' as const, data: sampleEventData('click') };
/** Each endpoint's backlog when several are paused at once: two steps after the pause's own. */
const MANY = 2 * PRUNE_STEP + 1;
const LEASE = 60_000;

/** An account with the endpoint a test moves and one it leaves alone, each with DELIVERIES due now. */
async function backlog(store: SenderStore, accountId: string) {
  const now = Date.now();
  const moved = await storeEndpoint(store, accountId, `ep_${accountId}_moved`, now);
  const other = await storeEndpoint(store, accountId, `ep_${accountId}_other`, now);
  const sender = createSender({ store });
  const made = await sender.publishMany(Array.from({ length: DELIVERIES }, () => ({ accountId, ...click })));
  expect(made.every((r) => r.ok)).toBe(true);
  return { moved, other, sender };
}

/** The endpoint's deliveries by status. */
async function statuses(store: SenderStore, accountId: string, endpointId: string) {
  const { items } = await store.listDeliveries(accountId, { endpointId, limit: 2 * DELIVERIES });
  const count: Record<string, number> = {};
  for (const d of items) count[d.status] = (count[d.status] ?? 0) + 1;
  return count;
}

/** Steps of `limit` until the endpoint is off the list; answers how many steps moved something. */
async function stepsUntilDone(store: SenderStore, id: string, limit = PRUNE_STEP) {
  let moving = 0;
  for (;;) {
    const step = await store.settleQueueStep(id, limit, Date.now());
    if (step.held + step.released + step.replayed > 0) moving++;
    if (step.done) return moving;
  }
}

const claim = (store: SenderStore, limit: number) =>
  store.claimDue({ now: Date.now() + 1_000, limit, leaseMs: LEASE, perEndpointCap: 10_000 });

/** Claims until nothing is left to claim: the endpoints of all that was claimed. */
async function claimAll(store: SenderStore) {
  const endpoints: string[] = [];
  for (let batch = await claim(store, 100); batch.length > 0; batch = await claim(store, 100)) {
    endpoints.push(...batch.map((c) => c.delivery.endpointId));
  }
  return endpoints;
}

/** `open(db)`: a store on the database named `db`, made and migrated on its first opening. */
function settlingSuite(name: string, open: (db: string) => Promise<SenderStore>) {
  describe(`${name}: moving an endpoint's deliveries in steps`, () => {
    it('holds a paused backlog a step at a time, claims passing over what is not held yet', async () => {
      const store = await open('pause');
      try {
        const { moved, other } = await backlog(store, 'acct_pause');
        expect(await store.pauseEndpoint('acct_pause', moved.id, Date.now())).toMatchObject({ paused: true });
        // The first step only: the rest waits for its steps.
        const first = await statuses(store, 'acct_pause', moved.id);
        expect(first.held).toBeGreaterThan(0);
        expect(first.pending).toBeGreaterThan(0);
        expect(first.held! + first.pending!).toBe(DELIVERIES);
        expect(await store.endpointsSettling(10)).toEqual([{ id: moved.id, accountId: moved.accountId }]);

        // Not held yet, none of them is claimed: every one of the other endpoint's is.
        const claimed = await claimAll(store);
        expect(claimed).toHaveLength(DELIVERIES);
        expect(claimed.every((endpointId) => endpointId === other.id)).toBe(true);

        expect(await stepsUntilDone(store, moved.id)).toBeGreaterThanOrEqual(2);
        expect(await statuses(store, 'acct_pause', moved.id)).toEqual({ held: DELIVERIES });
        expect(await store.endpointsSettling(10)).toEqual([]);
      } finally {
        await store.close();
      }
    });

    it('turns the steps around when the endpoint is resumed midway, and back when paused again', async () => {
      const store = await open('turn');
      try {
        const { moved } = await backlog(store, 'acct_turn');
        await store.pauseEndpoint('acct_turn', moved.id, Date.now());
        await store.settleQueueStep(moved.id, PRUNE_STEP, Date.now());
        const resumed = await store.resumeEndpoint('acct_turn', moved.id, Date.now());
        expect(resumed).toMatchObject({ settling: true });
        expect(resumed!.resumed).toBeGreaterThan(0);
        // Still listed: a step leaves none held of a live endpoint.
        expect(await stepsUntilDone(store, moved.id)).toBeGreaterThanOrEqual(1);
        expect(await statuses(store, 'acct_turn', moved.id)).toEqual({ pending: DELIVERIES });

        await store.pauseEndpoint('acct_turn', moved.id, Date.now());
        await stepsUntilDone(store, moved.id);
        expect(await statuses(store, 'acct_turn', moved.id)).toEqual({ held: DELIVERIES });
        expect(await store.endpointsSettling(10)).toEqual([]);
      } finally {
        await store.close();
      }
    });

    it('answers a resume once all are claimable again, counting them, and the pruning finishes a pause', async () => {
      const store = await open('engine');
      try {
        const { moved, sender } = await backlog(store, 'acct_engine');
        await sender.pauseEndpoint('acct_engine', moved.id);
        await sender.pruneLog(); // joins the pause's steps under way, or finishes them
        expect(await statuses(store, 'acct_engine', moved.id)).toEqual({ held: DELIVERIES });
        const { resumed } = await sender.resumeEndpoint('acct_engine', moved.id);
        expect(resumed).toBe(DELIVERIES);
        expect(await statuses(store, 'acct_engine', moved.id)).toEqual({ pending: DELIVERIES });
        expect(await store.endpointsSettling(10)).toEqual([]);
        await sender.stop();
      } finally {
        await store.close();
      }
    });

    it('finishes a pause cut short by a stopped process at the next process’s pruning', async () => {
      const first = await open('stopped');
      const { moved } = await backlog(first, 'acct_stopped');
      await first.pauseEndpoint('acct_stopped', moved.id, Date.now());
      await first.close(); // the steps never ran
      const store = await open('stopped');
      try {
        expect(await store.endpointsSettling(10)).toEqual([{ id: moved.id, accountId: moved.accountId }]);
        expect((await statuses(store, 'acct_stopped', moved.id)).pending).toBeGreaterThan(0);
        const sender = createSender({ store });
        await sender.pruneLog();
        expect(await statuses(store, 'acct_stopped', moved.id)).toEqual({ held: DELIVERIES });
        expect(await store.endpointsSettling(10)).toEqual([]);
        await sender.stop();
      } finally {
        await store.close();
      }
    });

    it('runs the steps of a change that waits for nothing in the background, until none is left', async () => {
      const store = await open('background');
      try {
        const { moved } = await backlog(store, 'acct_background');
        await store.pauseEndpoint('acct_background', moved.id, Date.now());
        const settling = queueSettling({
          store,
          clock: systemClock,
          logger: pino({ level: 'silent' }),
          wake: () => {},
          turns: stepTurns(1),
        });
        settling.inBackground(moved);
        await settling.idle();
        expect(await statuses(store, 'acct_background', moved.id)).toEqual({ held: DELIVERIES });
        expect(await store.endpointsSettling(10)).toEqual([]);
      } finally {
        await store.close();
      }
    });

    it('forgets a replay asked before the endpoint was disabled again', async () => {
      const store = await open('replay');
      try {
        const { moved } = await backlog(store, 'acct_replay');
        const disable = async () => {
          // Claims in due order until one of the endpoint's comes (the other's are due first).
          let mine: Awaited<ReturnType<typeof claim>>[number] | undefined;
          for (
            let batch = await claim(store, 100);
            !mine && batch.length > 0;
            batch = await claim(store, 100)
          ) {
            mine = batch.find((c) => c.delivery.endpointId === moved.id);
          }
          const applied = await recordAnswer(store, mine!, 500, Date.now(), {
            rules: { ...DEFAULT_RULES, policy: { threshold: 1, countPer: 'attempt' } },
          });
          expect(applied.disabledEndpoint).toMatchObject({ id: moved.id });
        };
        const skip = (n: number) =>
          createSender({ store }).publishMany(
            Array.from({ length: n }, () => ({ accountId: 'acct_replay', ...click })),
          );
        await disable();
        await skip(3);
        // Re-enabled with a replay, whose first step releases held deliveries only; then disabled again.
        expect(
          await store.reenableEndpoint('acct_replay', moved.id, { replaySkipped: true, now: Date.now() }),
        ).toMatchObject({ replayed: 0, settling: true });
        await disable();
        await skip(2);
        await store.reenableEndpoint('acct_replay', moved.id, { replaySkipped: false, now: Date.now() });
        await stepsUntilDone(store, moved.id);
        expect((await statuses(store, 'acct_replay', moved.id)).skipped).toBe(5);
      } finally {
        await store.close();
      }
    });

    it('re-enables a disabled endpoint in steps: held and replayed deliveries, each counted', async () => {
      const store = await open('gone');
      try {
        const { moved, other, sender } = await backlog(store, 'acct_gone');
        // One failed attempt disables it under a policy of one: the first step of holds with the record.
        const first = await claim(store, 10);
        const mine = first.find((c) => c.delivery.endpointId === moved.id);
        const othersFirst = first.filter((c) => c.delivery.endpointId === other.id).length;
        expect(mine).toBeDefined();
        const applied = await recordAnswer(store, mine!, 500, Date.now(), {
          rules: { ...DEFAULT_RULES, policy: { threshold: 1, countPer: 'attempt' } },
        });
        expect(applied.disabledEndpoint).toMatchObject({ id: moved.id, enabled: false });
        expect(await store.endpointsSettling(10)).toEqual([{ id: moved.id, accountId: moved.accountId }]);
        // Claims pass over the disabled endpoint's deliveries not held yet.
        const claimed = await claimAll(store);
        expect(claimed).toHaveLength(DELIVERIES - othersFirst);
        expect(claimed.every((endpointId) => endpointId === other.id)).toBe(true);
        await sender.pruneLog();
        // The failed one's retry is held with the rest.
        expect(await statuses(store, 'acct_gone', moved.id)).toEqual({ held: DELIVERIES });

        // Events while disabled are skipped; the re-enabling replays them with the held ones.
        await sender.publishMany(Array.from({ length: 3 }, () => ({ accountId: 'acct_gone', ...click })));
        const reenabled = await sender.reenableEndpoint('acct_gone', moved.id, { replaySkipped: true });
        expect(reenabled).toMatchObject({ resumed: DELIVERIES, replayed: 3 });
        expect(await statuses(store, 'acct_gone', moved.id)).toEqual({
          pending: DELIVERIES - 1 + 3,
          awaiting_retry: 1,
        });
        await sender.stop();
      } finally {
        await store.close();
      }
    });

    it("moves many endpoints' deliveries paused at once a few steps at a time, one at a turn of its own on SQLite", async () => {
      const base = await open('many');
      // More endpoints than PostgreSQL's steps at once, so that loops without turns would show it.
      const ids = ['a', 'b', 'c', 'd', 'e', 'f'].map((n) => `ep_many_${n}`);
      try {
        for (const id of ids) await storeEndpoint(base, 'acct_many', id, Date.now());
        // Each endpoint has two steps' worth and more: the pause's own step, then two or more.
        const made = await createSender({ store: base }).publishMany(
          Array.from({ length: MANY }, () => ({ accountId: 'acct_many', ...click })),
        );
        expect(made.every((r) => r.ok)).toBe(true);
        // The steps as the store sees them: which endpoint's, how many at once, and whether the
        // event loop turned between one's end and the next one's start.
        const steps: string[] = [];
        let running = 0;
        let most = 0;
        let sameTurn = 0;
        let turned = true;
        const store: SenderStore = {
          ...base,
          async settleQueueStep(id, limit, now) {
            if (!turned) sameTurn++;
            turned = false;
            steps.push(id);
            most = Math.max(most, ++running);
            try {
              return await base.settleQueueStep(id, limit, now);
            } finally {
              running--;
              setImmediate(() => {
                turned = true;
              });
            }
          },
        };
        const sender = createSender({ store });
        await Promise.all(ids.map((id) => sender.pauseEndpoint('acct_many', id)));
        await sender.pruneLog(); // joins the moves under way
        for (const id of ids) expect(await statuses(base, 'acct_many', id)).toEqual({ held: MANY });
        expect(new Set(steps).size).toBe(ids.length);
        expect(steps.length).toBeGreaterThanOrEqual(2 * ids.length);
        // PostgreSQL pooling 10 connections here (open()): 4 steps at once at most.
        if (base.capabilities.recordsOverNetwork) {
          expect(most).toBeLessThanOrEqual(STEPS_AT_ONCE_OVER_NETWORK);
          expect(most).toBeGreaterThan(1);
        } else {
          // SQLite, whose steps run on the event loop: one at a time, each at a turn of its own.
          expect(most).toBe(1);
          expect(sameTurn).toBe(0);
        }
        await sender.stop();
      } finally {
        await base.close();
      }
    });

    it("takes the steps in turns by account: another account's move goes next, not after all of one account's", async () => {
      const base = await open('accounts');
      const many = ['a', 'b', 'c', 'd', 'e', 'f'].map((n) => `ep_busy_${n}`);
      const other = 'ep_other';
      try {
        for (const id of many) await storeEndpoint(base, 'acct_busy', id, Date.now());
        await storeEndpoint(base, 'acct_other', other, Date.now());
        const publisher = createSender({ store: base });
        for (const accountId of ['acct_busy', 'acct_other'])
          await publisher.publishMany(Array.from({ length: MANY }, () => ({ accountId, ...click })));
        // The busy account's steps held until the other account's move has asked for its turn.
        const steps: string[] = [];
        let open = () => {};
        const gate = new Promise<void>((resolve) => {
          open = resolve;
        });
        const store: SenderStore = {
          ...base,
          async settleQueueStep(id, limit, now) {
            steps.push(id);
            if (id !== other) await gate;
            return base.settleQueueStep(id, limit, now);
          },
        };
        const sender = createSender({ store });
        await Promise.all(many.map((id) => sender.pauseEndpoint('acct_busy', id)));
        await sender.pauseEndpoint('acct_other', other);
        // The busy account's steps that had their turn before it asked, held at the gate: one at a
        // time, on SQLite, and on PostgreSQL pooling 4 connections (10 take 4).
        while (steps.length === 0) await new Promise<void>((resolve) => setImmediate(resolve));
        for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
        const before = steps.length;
        expect(before).toBe(1);
        open();
        await sender.pruneLog(); // joins the moves under way
        expect(await statuses(base, 'acct_other', other)).toEqual({ held: MANY });
        for (const id of many) expect(await statuses(base, 'acct_busy', id)).toEqual({ held: MANY });
        // The next step to start was the other account's, with the busy account's still waiting.
        expect(steps.indexOf(other)).toBe(before);
        expect(steps.slice(before + 1).filter((id) => id !== other).length).toBeGreaterThanOrEqual(
          many.length,
        );
        await sender.stop();
      } finally {
        await base.close();
      }
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), 'linkhooks-settling-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
settlingSuite('sqlite', async (db) => {
  const store = createSqliteStore({ filename: join(dir, `${db}.db`) });
  await store.migrate();
  return store;
});

const pgUp = await requireService('PostgreSQL', PG_URL);
describe.runIf(pgUp)('postgres', () => {
  const schemas = pgSchemas('lh_settle');
  afterAll(schemas.drop);
  const named = new Map<string, string>();
  const open = async (db: string) => {
    const schema = named.get(db) ?? schemas.fresh();
    named.set(db, schema);
    // The default pool where many endpoints move at once (4 steps of it at a time), 4 elsewhere.
    const store = createPostgresStore({ connectionString: PG_URL, schema, poolSize: db === 'many' ? 10 : 4 });
    await store.migrate();
    return store;
  };
  settlingSuite('postgres', open);

  it('passes over deliveries another transaction holds, as a record under way does, and moves them once it lets go', async () => {
    const store = await open('locked');
    const other = new pg.Client({ connectionString: PG_URL });
    await other.connect();
    try {
      const { moved } = await backlog(store, 'acct_locked');
      await other.query(`SET search_path = "${named.get('locked')}"`);
      await other.query('BEGIN');
      // Ten of its deliveries held by another transaction, as a record holds its delivery.
      const { rows } = await other.query(
        `SELECT id FROM deliveries WHERE endpoint_id = $1 ORDER BY id LIMIT 10 FOR UPDATE`,
        [moved.id],
      );
      expect(rows).toHaveLength(10);
      await store.pauseEndpoint('acct_locked', moved.id, Date.now());
      // Answers rather than waits: every step passes over the ten, and none says it is done.
      let step = await store.settleQueueStep(moved.id, PRUNE_STEP, Date.now());
      while (step.held > 0) step = await store.settleQueueStep(moved.id, PRUNE_STEP, Date.now());
      expect(step.done).toBe(false);
      expect(await statuses(store, 'acct_locked', moved.id)).toEqual({ held: DELIVERIES - 10, pending: 10 });
      expect(await store.endpointsSettling(10)).toEqual([{ id: moved.id, accountId: moved.accountId }]);
      await other.query('COMMIT');
      await stepsUntilDone(store, moved.id);
      expect(await statuses(store, 'acct_locked', moved.id)).toEqual({ held: DELIVERIES });
    } finally {
      await other.end();
      await store.close();
    }
  });

  // Several processes share a PostgreSQL database; one SQLite file has one process.
  it('moves every delivery before the endpoint leaves the list when several processes step it at once', async () => {
    const store = await open('together');
    const others = await Promise.all(Array.from({ length: 5 }, () => open('together')));
    try {
      const { moved } = await backlog(store, 'acct_together');
      await store.pauseEndpoint('acct_together', moved.id, Date.now());
      // A process's own steps, others' prunings and starts: each steps until it sees none left,
      // in small steps, so that many meet.
      await Promise.all([store, ...others].map((s) => stepsUntilDone(s, moved.id, 50)));
      expect(await statuses(store, 'acct_together', moved.id)).toEqual({ held: DELIVERIES });
      expect(await store.endpointsSettling(10)).toEqual([]);
    } finally {
      for (const s of [store, ...others]) await s.close();
    }
  });
});
