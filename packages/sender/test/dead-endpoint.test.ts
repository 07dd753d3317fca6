/**
 * An endpoint gone for good, still getting events, is disabled (design D1), in virtual time.
 * - Refusing every connection at once (a closed port), its attempts are left out of the circuit
 *   breaker (design D27): it is disabled on the retry schedule.
 * - Holding every connection until the deadline, it is backed off, one probe per cool-down, and
 *   each probe is a due retry before a new delivery, so its deliveries' schedules run however often
 *   new ones come.
 */
import { createServer } from 'node:net';
import { buildEvent } from '@linkhooks/receiver/testing';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { type DeliveryClient, noAnswerWithin, timedOut } from '../src/delivery/http-client.js';
import { RETRY_DELAYS_MS } from '../src/domain/schedule.js';
import { createSender } from '../src/engine/sender.js';
import { createMemoryStore } from '../src/store/memory-store.js';
import { capturedLog } from './helpers/captured-log.js';
import { addEndpoint } from './helpers/endpoints.js';
import { startHttpsReceiver } from './helpers/https-receiver.js';

const MINUTE = 60_000;
const SCHEDULE_MS = RETRY_DELAYS_MS.reduce((a, b) => a + b, 0);

/** A loopback port nothing listens on: every connection to it is refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const DEADLINE_MS = 30_000;

/** An endpoint that holds every connection until the attempt's deadline: each attempt takes 30 s. */
const hanging = (clock: ManualClock): DeliveryClient => ({
  async send() {
    clock.advance(DEADLINE_MS);
    return { ...timedOut(noAnswerWithin(DEADLINE_MS)), durationMs: DEADLINE_MS };
  },
  close: async () => {},
  destroy: async () => {},
});

/**
 * Minutes until the endpoint is disabled, a click published every `everyMinutes` (by the clock,
 * which a hanging attempt moves on too); null if never within `hours`.
 */
async function minutesUntilDisabled(
  url: string,
  everyMinutes: number,
  hours: number,
  client?: (clock: ManualClock) => DeliveryClient,
) {
  const clock = new ManualClock();
  const start = clock.now();
  const sender = createSender({
    store: createMemoryStore(),
    clock,
    allowPrivateNetworks: true,
    ...(client ? { client: client(clock) } : {}),
  });
  try {
    const { account } = await sender.createAccount({ name: 'Gone', plan: 'business' });
    const endpoint = await sender.createEndpoint(account.id, { url, events: ['click'] });
    let published = 0;
    for (let minute = 0; minute < hours * 60; minute = Math.floor((clock.now() - start) / MINUTE)) {
      for (; published * everyMinutes <= minute; published++)
        await sender.publish(account.id, buildEvent('click'));
      await sender.tick();
      if (!(await sender.getEndpoint(account.id, endpoint.id)).enabled) return (clock.now() - start) / MINUTE;
      clock.advance(MINUTE);
    }
    return null;
  } finally {
    await sender.stop(0);
  }
}

describe('an endpoint that never answers, still getting clicks', () => {
  it('refusing at once with a click every 10 minutes, is disabled when its 10th delivery has failed its 6th attempt', async () => {
    const minutes = await minutesUntilDisabled(`https://127.0.0.1:${await closedPort()}/hook`, 10, 24);
    // The 10th click is published at minute 90; its schedule ends 10 h 36 min later.
    const due = 90 + SCHEDULE_MS / MINUTE;
    expect(minutes).not.toBeNull();
    expect(minutes!).toBeGreaterThanOrEqual(due);
    expect(minutes!).toBeLessThanOrEqual(due + 10);
  });

  it('holding every connection, is disabled within a day, its probes taking due retries first', async () => {
    const minutes = await minutesUntilDisabled('https://127.0.0.1:9/hook', 10, 72, hanging);
    // One probe per cool-down (10 min at most) runs six attempts of each delivery: at best it ends
    // with the 10th click's schedule.
    expect(minutes).not.toBeNull();
    expect(minutes!).toBeGreaterThanOrEqual(90 + SCHEDULE_MS / MINUTE);
    expect(minutes!).toBeLessThanOrEqual(24 * 60);
  });

  it('holding every connection and getting a click a minute, is disabled within a day too', async () => {
    const minutes = await minutesUntilDisabled('https://127.0.0.1:9/hook', 1, 72, hanging);
    expect(minutes).not.toBeNull();
    expect(minutes!).toBeGreaterThanOrEqual(9 + SCHEDULE_MS / MINUTE);
    expect(minutes!).toBeLessThanOrEqual(24 * 60);
  });
});

describe("what an operator sees of an endpoint's breaker", () => {
  it('logs it opening, with the endpoint and its account, and closing; counts the trips', async () => {
    const clock = new ManualClock();
    let answering = false;
    const hangingUntilAnswered = hanging(clock);
    const { logger, linesStarting } = capturedLog();
    const sender = createSender({
      store: createMemoryStore(),
      clock,
      logger,
      allowPrivateNetworks: true,
      client: {
        ...hangingUntilAnswered,
        send: async (request) =>
          answering
            ? { outcome: { ok: true, statusCode: 200 }, durationMs: 5, responseSnippet: null }
            : hangingUntilAnswered.send(request),
      },
    });
    try {
      const { account } = await sender.createAccount({ name: 'Hanging', plan: 'business' });
      const endpoint = await sender.createEndpoint(account.id, {
        url: 'https://127.0.0.1:9/hook',
        events: ['click'],
      });
      for (let i = 0; i < 3; i++) await sender.publish(account.id, buildEvent('click'));
      await sender.tick();
      // Past the cool-down and the first retries' minute, the probe is answered.
      clock.advance(2 * MINUTE);
      answering = true;
      await sender.tick();
      const lines = linesStarting('circuit breaker');
      expect(lines).toEqual([
        expect.objectContaining({
          level: 40,
          msg: 'circuit breaker opened',
          endpoint: endpoint.id,
          account: account.id,
          trips: 1,
          coolDownMs: 30_000,
        }),
        expect.objectContaining({
          level: 30,
          msg: 'circuit breaker closed',
          endpoint: endpoint.id,
          trips: 1,
        }),
      ]);
      expect(await sender.metrics.metrics()).toContain('linkhooks_breaker_trips_total{kind="endpoint"} 1');
    } finally {
      await sender.stop(0);
    }
  });
});

describe("what an operator sees of an endpoint's disabling", () => {
  it('logs it once, with its account and why: a 410 Gone where the service disables on it', async () => {
    const receiver = await startHttpsReceiver();
    const { logger, linesStarting } = capturedLog();
    const sender = createSender({
      store: createMemoryStore(),
      clock: new ManualClock(),
      logger,
      allowPrivateNetworks: true,
      ca: receiver.certs.ca,
      disableOnGone: true,
    });
    try {
      const { account } = await sender.createAccount({ name: 'Gone', plan: 'business' });
      const { endpoint } = await addEndpoint(sender, receiver, { account: account.id, behaviour: 'gone' });
      await sender.publish(account.id, buildEvent('click'));
      await sender.tick();
      expect(linesStarting('endpoint disabled')).toEqual([
        expect.objectContaining({
          level: 40,
          msg: 'endpoint disabled: its receiver answered 410 Gone',
          endpoint: endpoint.id,
          account: account.id,
          reason: 'gone',
        }),
      ]);
    } finally {
      await sender.stop(0);
      await receiver.close();
    }
  });
});
