/**
 * Graceful shutdown: `stop()` stops claiming, lets attempts in flight finish within the grace
 * period, and releases whatever is still running after it so another worker can take it over.
 */
import { buildEvent } from '@linkhooks/receiver/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../src/clock.js';
import { createMemoryStore } from '../src/store/memory-store.js';
import { addEndpoint } from './helpers/endpoints.js';
import { ACCOUNT, makeSender } from './helpers/harness.js';
import { type HttpsReceiver, startHttpsReceiver } from './helpers/https-receiver.js';

let receiver: HttpsReceiver;
beforeAll(async () => {
  receiver = await startHttpsReceiver();
});
afterAll(() => receiver.close());

it('releases attempts still in flight after the grace period, so another worker delivers them', async () => {
  const store = createMemoryStore();
  const first = makeSender(receiver.certs, { store, clock: systemClock, attemptTimeoutMs: 20_000 }).sender;
  await addEndpoint(first, receiver, { route: 'stop', behaviour: 'hang' });
  const { deliveries } = await first.publish(ACCOUNT, buildEvent('click'));
  first.start();
  await receiver.until(() => receiver.hits.some((h) => h.route === 'stop'));

  const started = performance.now();
  await first.stop(100);
  expect(performance.now() - started).toBeLessThan(5_000);
  expect((await store.getDelivery(ACCOUNT, deliveries[0]!.id))!.attempts).toEqual([]);

  // The lease was given back: a second worker claims it at once, long before the lease would expire.
  receiver.behave('stop', 'ok');
  const second = makeSender(receiver.certs, { store, clock: systemClock }).sender;
  expect(await second.tick()).toBe(1);
  expect((await store.getDelivery(ACCOUNT, deliveries[0]!.id))!.delivery.status).toBe('delivered');
  await second.stop();
});

it('lets an attempt in flight finish within the grace period and records it', async () => {
  const store = createMemoryStore();
  const sender = makeSender(receiver.certs, { store, clock: systemClock }).sender;
  await addEndpoint(sender, receiver, { route: 'finish' });
  const { deliveries } = await sender.publish(ACCOUNT, buildEvent('click'));
  sender.start();
  await receiver.until(() => receiver.hits.some((h) => h.route === 'finish'));
  await sender.stop(10_000);
  expect((await store.getDelivery(ACCOUNT, deliveries[0]!.id))!.delivery.status).toBe('delivered');
  expect(receiver.received.filter((r) => r.route === 'finish')).toHaveLength(1);
});
