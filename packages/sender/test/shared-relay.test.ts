/**
 * A relay many customers' endpoints share (an automation platform's hooks host), through the
 * engine with real HTTPS requests to one loopback origin, in virtual time for the cool-downs: one
 * customer's endpoints there that never answer back off on their own breakers (design D27), and
 * the relay stays open to everyone else's; two customers' unanswered requests there open the
 * relay's breaker, as for an outage.
 */
import { buildEvent } from '@linkhooks/receiver/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../src/clock.js';
import {
  COOL_DOWN_MS,
  HELD_SLOT_MS,
  ORIGIN_OTHER_ACCOUNTS,
  ORIGIN_THRESHOLD,
} from '../src/domain/breaker.js';
import { createSender } from '../src/engine/sender.js';
import { createMemoryStore } from '../src/store/memory-store.js';
import type { AttemptReport } from '../src/worker/attempt.js';
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
    onAttempt: ({ claim, attempt }) => {
      const key = claim.delivery.accountId;
      outcomes.set(key, [...(outcomes.get(key) ?? []), attempt.failureKind]);
    },
  });
  const broken: string[] = [];
  for (let a = 0; a < hangingAccounts; a++) {
    const { account } = await sender.createAccount({ name: `Broken ${a}`, plan: 'business' });
    broken.push(account.id);
    // More endpoints than the relay's breaker counts, each with one request that hangs.
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

  it('backs the relay off once two customers’ requests there go unanswered', async () => {
    const { clock, sender, outcomes, broken, healthy } = await relayWith(2);
    try {
      for (const account of broken) await sender.publish(account, buildEvent('click'));
      await sender.tick();
      // Time-outs only, at least the threshold's in all, and enough of each account's to be more
      // than one account's run.
      const runs = broken.map((account) => outcomes.get(account) ?? []);
      for (const run of runs) {
        expect(run.length).toBeGreaterThanOrEqual(ORIGIN_OTHER_ACCOUNTS);
        expect(new Set(run)).toEqual(new Set(['timeout']));
      }
      expect(runs.flat().length).toBeGreaterThanOrEqual(ORIGIN_THRESHOLD);
      await sender.publish(healthy, buildEvent('click'));
      await sender.tick();
      expect(outcomes.get(healthy)).toBeUndefined();
      // Half-open after the cool-down: the healthy customer's delivery probes it, and is answered.
      clock.advance(COOL_DOWN_MS);
      await sender.tick();
      expect(outcomes.get(healthy)).toEqual([null]);
    } finally {
      await sender.stop(0);
    }
  });

  it("delivers a customer's event at once while another customer's requests there hold every connection", async () => {
    const delivered: AttemptReport[] = [];
    const hung: AttemptReport[] = [];
    const reported = conditions();
    const sender = createSender({
      store: createMemoryStore(),
      clock: systemClock,
      allowPrivateNetworks: true,
      ca: relay.certs.ca,
      // The whole default deadline: the hanging requests hold their connections for all of the test.
      onAttempt: (report) => {
        (report.attempt.failureKind === null ? delivered : hung).push(report);
        reported.changed();
      },
    });
    try {
      const { account: broken } = await sender.createAccount({ name: 'Broken', plan: 'business' });
      const { account: healthy } = await sender.createAccount({ name: 'Healthy', plan: 'business' });
      // Four endpoints at their cap of 8: 32 requests that hang, twice the relay's 16 connections.
      const routes: string[] = [];
      for (let i = 0; i < 4; i++) {
        routes.push((await addEndpoint(sender, relay, { account: broken.id, behaviour: 'hang' })).route);
      }
      const { route } = await addEndpoint(sender, relay, { account: healthy.id });
      for (let i = 0; i < 8; i++) await sender.publish(broken.id, buildEvent('click'));
      sender.start();
      await relay.until(() => relay.hits.filter((h) => routes.includes(h.route)).length >= 16);
      await sender.publish(healthy.id, buildEvent('click'));
      await reported.until(() => delivered.length > 0);
      // Delivered while every one of the hanging requests was still out.
      expect(hung).toEqual([]);
      expect(delivered.map((r) => [r.claim.delivery.accountId, r.attempt.number])).toEqual([[healthy.id, 1]]);
      expect(relay.received.filter((r) => r.route === route)).toHaveLength(1);
    } finally {
      await sender.stop(0);
    }
  });
});
