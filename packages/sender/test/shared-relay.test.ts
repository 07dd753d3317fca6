/**
 * A relay many customers' endpoints share (an automation platform's hooks host), in virtual time:
 * one customer's endpoints there that never answer back off on their own breakers (design D27),
 * and the relay stays open to everyone else's; a second customer's unanswered request there opens
 * the relay's breaker, as for an outage.
 */
import { buildEvent } from '@linkhooks/receiver/testing';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { type DeliveryClient, noAnswerWithin, timedOut } from '../src/delivery/http-client.js';
import { ORIGIN_THRESHOLD } from '../src/domain/breaker.js';
import { createSender } from '../src/engine/sender.js';
import { createMemoryStore } from '../src/store/memory-store.js';

const RELAY = 'https://127.0.0.1:9'; // never connected to: the client below answers
const DEADLINE_MS = 30_000;

/** Requests to a path under `/hang/` end unanswered at the deadline; the rest are answered 200. */
const relayClient: DeliveryClient = {
  async send({ url }) {
    if (new URL(url).pathname.startsWith('/hang/')) {
      return { ...timedOut(noAnswerWithin(DEADLINE_MS)), durationMs: DEADLINE_MS };
    }
    return { outcome: { ok: true, statusCode: 200 }, durationMs: 5, responseSnippet: null };
  },
  close: async () => {},
  destroy: async () => {},
};

async function relayWith(hangingAccounts: number) {
  const clock = new ManualClock();
  const outcomes = new Map<string, (string | null)[]>();
  const sender = createSender({
    store: createMemoryStore(),
    clock,
    allowPrivateNetworks: true,
    client: relayClient,
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
    for (let i = 0; i < ORIGIN_THRESHOLD + 1; i++) {
      await sender.createEndpoint(account.id, { url: `${RELAY}/hang/${a}/${i}`, events: ['click'] });
    }
  }
  const { account: healthy } = await sender.createAccount({ name: 'Healthy', plan: 'business' });
  await sender.createEndpoint(healthy.id, { url: `${RELAY}/ok`, events: ['click'] });
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
      const unanswered = broken.flatMap((a) => outcomes.get(a) ?? []);
      expect(unanswered.length).toBeGreaterThanOrEqual(ORIGIN_THRESHOLD);
      await sender.publish(healthy, buildEvent('click'));
      await sender.tick();
      expect(outcomes.get(healthy)).toBeUndefined();
      // Half-open after the cool-down: the healthy customer's delivery probes it, and is answered.
      clock.advance(DEADLINE_MS);
      await sender.tick();
      expect(outcomes.get(healthy)).toEqual([null]);
    } finally {
      await sender.stop(0);
    }
  });
});
