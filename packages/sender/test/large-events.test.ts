/**
 * Events larger than LARGE_BODY_BYTES through the engine to a real HTTPS receiver, and through the
 * service's ingest route: their deliveries start, and a single event's body is parsed, in the turn's
 * budget where this thread does the work (design D76); they still arrive whole, each signed over its
 * bytes and verified by the receiver SDK, once per endpoint. The budget is the real one, counted
 * as it runs each step; bodies of 64 KiB or less never wait for it.
 */
import { sampleEventData } from '@linkhooks/protocol';
import { buildEvent } from '@linkhooks/receiver/testing';
import { afterAll, beforeAll, beforeEach, expect, it, vi } from 'vitest';
import { createSender } from '../src/engine/sender.js';
import { createMemoryStore } from '../src/store/memory-store.js';
import { LARGE_BODY_BYTES, type TurnBudget } from '../src/turn-budget.js';
import { type Api, SERVICE_TOKEN, startApi } from './helpers/api-service.js';
import { startHttpsReceiver } from './helpers/https-receiver.js';
import { createTestCertificates } from './helpers/test-ca.mjs';

/** How many steps the turn's budget has run since the last test began. */
const budget = vi.hoisted(() => ({ steps: 0 }));
vi.mock('../src/turn-budget.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../src/turn-budget.js')>();
  const counted: TurnBudget = (step) =>
    real.inTurn(() => {
      budget.steps += 1;
      return step();
    });
  const counting = (chosen: TurnBudget) => (chosen === real.inTurn ? counted : chosen);
  return {
    ...real,
    parseBudgetFor: (store: { recordsOverNetwork: boolean }, batch: boolean) =>
      counting(real.parseBudgetFor(store, batch)),
    startBudgetFor: (threaded: boolean) => counting(real.startBudgetFor(threaded)),
  };
});
beforeEach(() => {
  budget.steps = 0;
});

const certs = createTestCertificates();
let api: Api;
beforeAll(async () => {
  api = await startApi(certs);
});
afterAll(async () => {
  await api.close();
});

it('delivers events larger than 64 KiB whole and signed to every endpoint, each start in the budget', async () => {
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
    // A body of 64 KiB or less starts at once (attempt.test.ts holds the boundary itself).
    await sender.publish(
      account.id,
      buildEvent('click', { data: { note: 'w'.repeat(1_000) } as Record<string, unknown> }),
    );
    await sender.tick();
    await receiver.until(() => receiver.received.length === 2);
    expect(budget.steps).toBe(0);

    const notes = ['x', 'y', 'z'].map((c) => c.repeat(LARGE_BODY_BYTES + 1_000));
    for (const note of notes)
      await sender.publish(account.id, buildEvent('click', { data: { note } as Record<string, unknown> }));
    await sender.tick();
    await receiver.until(() => receiver.received.length === 8);
    expect(budget.steps).toBe(6);
    const large = receiver.received.slice(2);
    expect(large.every((r) => r.rawBody.length > LARGE_BODY_BYTES)).toBe(true);
    const got = large.map((r) => `${r.route} ${(r.event.data as { note: string }).note[0]}`).sort();
    expect(got).toEqual(['a x', 'a y', 'a z', 'b x', 'b y', 'b z']);
    expect(
      large.every((r) => (r.event.data as { note: string }).note.length === LARGE_BODY_BYTES + 1_000),
    ).toBe(true);
  } finally {
    await sender.stop(0);
    await receiver.close();
  }
});

it('parses a single event larger than 64 KiB sent to the ingest route in the budget, a smaller one at once', async () => {
  const ingest = (note: string) =>
    api.call('POST', '/internal/v1/events', {
      key: SERVICE_TOKEN,
      body: { account_id: api.alice.account.id, event: 'click', data: { ...sampleEventData('click'), note } },
    });
  const small = await ingest('s'.repeat(1_000));
  expect(small.status, small.text).toBe(202);
  expect(budget.steps).toBe(0);

  const large = await ingest('l'.repeat(LARGE_BODY_BYTES + 1_000));
  expect(large.status, large.text).toBe(202);
  expect(budget.steps).toBe(1);
  const stored = await api.store.getEvent(api.alice.account.id, large.json.event_id);
  const body = JSON.parse(Buffer.from(stored?.body ?? []).toString('utf8'));
  expect(body.data.note).toBe('l'.repeat(LARGE_BODY_BYTES + 1_000));
});
