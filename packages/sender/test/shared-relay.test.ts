/**
 * A relay many customers' endpoints share (an automation platform's hooks host), through the
 * engine with real HTTPS requests to one loopback origin, in virtual time for the cool-downs:
 * customers' endpoints there that never answer back off on their own breakers, each customer's
 * there together (design D27), and the relay stays open to everyone else's.
 */
import { buildEvent } from '@linkhooks/receiver/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../src/clock.js';
import { COOL_DOWN_MS, HELD_SLOT_MS, ORIGIN_THRESHOLD } from '../src/domain/breaker.js';
import { type SlotOptions, slotsOf } from '../src/engine/options.js';
import { createSender } from '../src/engine/sender.js';
import { createMemoryStore } from '../src/store/memory-store.js';
import type { SenderStore } from '../src/store/port.js';
import type { ClaimedDelivery } from '../src/store/records.js';
import type { AttemptMade, AttemptReport } from '../src/worker/attempt.js';
import { conditions } from './helpers/conditions.js';
import { addEndpoint } from './helpers/endpoints.js';
import { type HttpsReceiver, startHttpsReceiver } from './helpers/https-receiver.js';

/** Long enough for an unanswered attempt to count toward a breaker, short enough for a test. */
const DEADLINE_MS = HELD_SLOT_MS + 200;

let relay: HttpsReceiver;
beforeAll(async () => {
  relay = await startHttpsReceiver();
});
afterAll(() => relay.close());

async function relayWith(hangingAccounts: number) {
  const clock = new ManualClock();
  const outcomes = new Map<string, (string | null)[]>();
  const sender = createSender({
    store: createMemoryStore(),
    clock,
    allowPrivateNetworks: true,
    ca: relay.certs.ca,
    attemptTimeoutMs: DEADLINE_MS,
    onAttempt: (report) => {
      const key = report.claim.delivery.accountId;
      outcomes.set(key, [
        ...(outcomes.get(key) ?? []),
        report.unsent ? 'unsent' : report.attempt.failureKind,
      ]);
    },
  });
  const broken: string[] = [];
  for (let a = 0; a < hangingAccounts; a++) {
    const { account } = await sender.createAccount({ name: `Broken ${a}`, plan: 'business' });
    broken.push(account.id);
    // More endpoints than an account's breaker at the relay counts, each with one request that hangs.
    for (let i = 0; i <= ORIGIN_THRESHOLD; i++) {
      await addEndpoint(sender, relay, { account: account.id, behaviour: 'hang' });
    }
  }
  const { account: healthy } = await sender.createAccount({ name: 'Healthy', plan: 'business' });
  await addEndpoint(sender, relay, { account: healthy.id });
  return { clock, sender, outcomes, broken, healthy: healthy.id };
}

describe('a relay many customers share', () => {
  it("delivers a customer's events there while another customer's endpoints there hang", async () => {
    const { sender, outcomes, broken, healthy } = await relayWith(1);
    try {
      await sender.publish(broken[0]!, buildEvent('click'));
      await sender.tick();
      expect(outcomes.get(broken[0]!)).toEqual(Array(ORIGIN_THRESHOLD + 1).fill('timeout'));
      // Right after the time-outs, within what would be the relay's cool-down.
      await sender.publish(healthy, buildEvent('click'));
      await sender.tick();
      expect(outcomes.get(healthy)).toEqual([null]);
    } finally {
      await sender.stop(0);
    }
  });

  it("backs off each customer whose endpoints there hang, and delivers everyone else's there at once", async () => {
    const { clock, sender, outcomes, broken, healthy } = await relayWith(2);
    try {
      for (const account of broken) await sender.publish(account, buildEvent('click'));
      await sender.tick();
      // Time-outs only, each customer's at least the threshold.
      for (const account of broken) {
        const run = outcomes.get(account) ?? [];
        expect(run.length).toBeGreaterThanOrEqual(ORIGIN_THRESHOLD);
        expect(new Set(run)).toEqual(new Set(['timeout']));
      }
      const attempted = () => broken.map((account) => outcomes.get(account)?.length);
      const before = attempted();
      // Within the cool-down: the healthy customer's click goes at once, the broken ones' wait.
      await sender.publish(healthy, buildEvent('click'));
      for (const account of broken) await sender.publish(account, buildEvent('click'));
      await sender.tick();
      expect(outcomes.get(healthy)).toEqual([null]);
      expect(attempted()).toEqual(before);
      // Half-open after the cool-down: one request of each broken customer's there probes it.
      clock.advance(COOL_DOWN_MS);
      await sender.tick();
      expect(attempted()).toEqual(before.map((n) => n! + 1));
      expect(outcomes.get(healthy)).toEqual([null]);
    } finally {
      await sender.stop(0);
    }
  });

  it("delivers a customer's event at once while another customer's requests there hold every connection", async () => {
    // Four endpoints at their cap of 8: 32 requests that hang, twice the relay's 16 connections.
    const t = await hangingThere(4, 32);
    try {
      expect(t.hung).toEqual([]);
      expect(t.delivered.map((r) => [r.claim.delivery.accountId, r.attempt.number])).toEqual([
        [t.healthy, 1],
      ]);
      expect(relay.received.filter((r) => r.route === t.route)).toHaveLength(1);
    } finally {
      await t.sender.stop(0);
    }
  });

  it("delivers a customer's event at once while another customer has enough hanging there to fill the relay's share", async () => {
    const { perOriginCap, perAccountAtOriginCap } = slotsOf({});
    // Endpoints at their cap of 8 that hang, enough to hold the relay's whole share (56); the
    // healthy customer's click published once the hanging one's claims reach its share there (48).
    const t = await hangingThere(perOriginCap / 8, perAccountAtOriginCap);
    try {
      expect(t.hung).toEqual([]);
      expect(t.delivered.map((r) => [r.claim.delivery.accountId, r.attempt.number])).toEqual([
        [t.healthy, 1],
      ]);
      expect(t.claimed.get(t.broken)).toBe(perAccountAtOriginCap);
    } finally {
      await t.sender.stop(0);
    }
  });

  // Each broken customer's endpoints there could hold the relay's whole share on their own;
  // together they hold one account's share there, and one past it at most. With 32 slots, one
  // claim of the default batch (32) could take the origin's whole share (24) at once.
  it.each([
    ['the default slots', {}],
    ['32 slots, from the first claim there', { concurrency: 32 }],
  ])(
    "delivers a customer's event at once while two other customers have enough hanging there to fill the relay's share (%s)",
    async (_, slots: SlotOptions) => {
      const { perOriginCap, perAccountAtOriginCap } = slotsOf(slots);
      const t = await hangingThere(perOriginCap / 8, perAccountAtOriginCap, 2, slots);
      try {
        expect(t.hung).toEqual([]);
        expect(t.delivered.map((r) => [r.claim.delivery.accountId, r.attempt.number])).toEqual([
          [t.healthy, 1],
        ]);
        expect(t.claimedBroken()).toBeLessThanOrEqual(perAccountAtOriginCap + 1);
      } finally {
        await t.sender.stop(0);
      }
    },
  );
});

/**
 * A sender delivering to the relay with the whole default deadline (the hanging requests hold
 * their connections for all of a test), its claims counted per account: `brokenAccounts`
 * customers (one by default) each with `endpoints` there that hang, 8 clicks each, and once
 * `claimedFirst` of theirs are claimed, a healthy customer's click there; resolves once something
 * is delivered.
 */
async function hangingThere(
  endpoints: number,
  claimedFirst: number,
  brokenAccounts = 1,
  slots: SlotOptions = {},
) {
  const delivered: AttemptMade[] = [];
  const hung: AttemptReport[] = [];
  const claimed = new Map<string, number>();
  const happened = conditions();
  const counted = (taken: ClaimedDelivery[]) => {
    for (const c of taken) claimed.set(c.delivery.accountId, (claimed.get(c.delivery.accountId) ?? 0) + 1);
    happened.changed();
  };
  const memory = createMemoryStore();
  const store: SenderStore = {
    ...memory,
    async claimDue(request) {
      const taken = await memory.claimDue(request);
      counted(taken);
      return taken;
    },
    async claimTurn(request) {
      const turn = await memory.claimTurn(request);
      counted(turn.claimed);
      return turn;
    },
  };
  const sender = createSender({
    ...slots,
    store,
    clock: systemClock,
    allowPrivateNetworks: true,
    ca: relay.certs.ca,
    onAttempt: (report) => {
      if (!report.unsent && report.attempt.failureKind === null) delivered.push(report);
      else hung.push(report);
      happened.changed();
    },
  });
  const broken: string[] = [];
  for (let a = 0; a < brokenAccounts; a++) {
    broken.push((await sender.createAccount({ name: `Broken ${a}`, plan: 'business' })).account.id);
  }
  const { account: healthy } = await sender.createAccount({ name: 'Healthy', plan: 'business' });
  const routes: string[] = [];
  for (const account of broken) {
    for (let i = 0; i < endpoints; i++) {
      routes.push((await addEndpoint(sender, relay, { account, behaviour: 'hang' })).route);
    }
  }
  const { route } = await addEndpoint(sender, relay, { account: healthy.id });
  for (const account of broken) {
    for (let i = 0; i < 8; i++) await sender.publish(account, buildEvent('click'));
  }
  const claimedBroken = () => broken.reduce((sum, account) => sum + (claimed.get(account) ?? 0), 0);
  sender.start();
  try {
    await happened.until(() => claimedBroken() >= claimedFirst);
    // The relay's 16 connections taken by them.
    await relay.until(() => relay.hits.filter((h) => routes.includes(h.route)).length >= 16);
    await sender.publish(healthy.id, buildEvent('click'));
    await happened.until(() => delivered.length > 0);
  } catch (error) {
    await sender.stop(0);
    throw error;
  }
  return { sender, delivered, hung, claimed, claimedBroken, route, broken: broken[0]!, healthy: healthy.id };
}
