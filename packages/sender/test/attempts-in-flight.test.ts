/**
 * `linkhooks_attempts_in_flight`: what a worker has out, read from the engine at each scrape, so an
 * operator can tell attempts out from deliveries stuck (design D27's hanging endpoints hold theirs
 * for 30 s).
 */
import { buildEvent } from '@linkhooks/receiver/testing';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import type { DeliveryClient, SendResult } from '../src/delivery/http-client.js';
import { createSender } from '../src/engine/sender.js';
import { createMemoryStore } from '../src/store/memory-store.js';
import { conditions } from './helpers/conditions.js';

const gauge = async (sender: ReturnType<typeof createSender>) =>
  /^linkhooks_attempts_in_flight (\d+)$/m.exec(await sender.metrics.metrics())?.[1];

describe('the attempts in flight gauge', () => {
  it('counts the requests out, and none once they are answered and recorded', async () => {
    const out: ((result: SendResult) => void)[] = [];
    const sent = conditions();
    const client: DeliveryClient = {
      send: () =>
        new Promise((resolve) => {
          out.push(resolve);
          sent.changed();
        }),
      close: async () => undefined,
      destroy: async () => undefined,
    };
    const sender = createSender({
      store: createMemoryStore(),
      clock: new ManualClock(),
      client,
      allowPrivateNetworks: true,
    });
    try {
      const { account } = await sender.createAccount({ name: 'Busy', plan: 'business' });
      await sender.createEndpoint(account.id, { url: 'https://127.0.0.1:9/hook', events: ['click'] });
      expect(await gauge(sender)).toBe('0');
      for (let i = 0; i < 3; i++) await sender.publish(account.id, buildEvent('click'));
      const ticking = sender.tick();
      await sent.until(() => out.length === 3);
      expect(await gauge(sender)).toBe('3');
      for (const answer of out)
        answer({ outcome: { ok: true, statusCode: 200 }, durationMs: 5, responseSnippet: null });
      await ticking;
      expect(await gauge(sender)).toBe('0');
    } finally {
      await sender.stop(0);
    }
  });
});
