/**
 * Events larger than LARGE_BODY_BYTES through the engine to a real HTTPS receiver: their deliveries
 * start in the turn's budget where this thread sends them (design D76), and still arrive whole, each
 * signed over its bytes and verified by the receiver SDK, once per endpoint.
 */
import { buildEvent } from '@linkhooks/receiver/testing';
import { expect, it } from 'vitest';
import { createSender } from '../src/engine/sender.js';
import { createMemoryStore } from '../src/store/memory-store.js';
import { LARGE_BODY_BYTES } from '../src/turn-budget.js';
import { startHttpsReceiver } from './helpers/https-receiver.js';

it('delivers events larger than 64 KiB whole and signed, to every endpoint', async () => {
  const receiver = await startHttpsReceiver();
  const sender = createSender({
    store: createMemoryStore(),
    ca: receiver.certs.ca,
    allowPrivateNetworks: true,
  });
  try {
    const { account } = await sender.createAccount({ name: 'Large events', plan: 'business' });
    for (const name of ['a', 'b']) {
      const endpoint = await sender.createEndpoint(account.id, {
        url: receiver.route(name, 'pending'),
        events: ['click'],
      });
      receiver.route(name, endpoint.secret);
    }
    const notes = ['x', 'y', 'z'].map((c) => c.repeat(LARGE_BODY_BYTES + 1_000));
    for (const note of notes)
      await sender.publish(account.id, buildEvent('click', { data: { note } as Record<string, unknown> }));
    await sender.tick();
    await receiver.until(() => receiver.received.length === 6);
    expect(receiver.received.every((r) => r.rawBody.length > LARGE_BODY_BYTES)).toBe(true);
    const got = receiver.received
      .map((r) => `${r.route} ${(r.event.data as { note: string }).note[0]}`)
      .sort();
    expect(got).toEqual(['a x', 'a y', 'a z', 'b x', 'b y', 'b z']);
    expect(
      receiver.received.every(
        (r) => (r.event.data as { note: string }).note.length === LARGE_BODY_BYTES + 1_000,
      ),
    ).toBe(true);
  } finally {
    await sender.stop(0);
    await receiver.close();
  }
});
