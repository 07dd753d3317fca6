/**
 * An endpoint gone for good that refuses every connection at once (a closed port), still getting
 * events: it is disabled on the retry schedule (design D1), in virtual time. Its attempts are left
 * out of the circuit breaker (design D27): backed off behind it, its retries waited behind its new
 * deliveries, one probe per cool-down, and with a click every ten minutes it was still enabled after
 * 72 hours. An endpoint that holds each connection a second or more is still backed off (D27).
 */
import { createServer } from 'node:net';
import { buildEvent } from '@linkhooks/receiver/testing';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { RETRY_DELAYS_MS } from '../src/domain/schedule.js';
import { createSender } from '../src/engine/sender.js';
import { createMemoryStore } from '../src/store/memory-store.js';

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

/** Minutes until the endpoint is disabled, a click published every `everyMinutes`; null if never within `hours`. */
async function minutesUntilDisabled(url: string, everyMinutes: number, hours: number) {
  const clock = new ManualClock();
  const sender = createSender({ store: createMemoryStore(), clock, allowPrivateNetworks: true });
  try {
    const { account } = await sender.createAccount({ name: 'Gone', plan: 'business' });
    const endpoint = await sender.createEndpoint(account.id, { url, events: ['click'] });
    for (let minute = 0; minute < hours * 60; minute++) {
      if (minute % everyMinutes === 0) await sender.publish(account.id, buildEvent('click'));
      await sender.tick();
      if (!(await sender.getEndpoint(account.id, endpoint.id)).enabled) return minute;
      clock.advance(MINUTE);
    }
    return null;
  } finally {
    await sender.stop(0);
  }
}

describe('an endpoint that never answers, still getting a click every 10 minutes', () => {
  it('refusing at once, is disabled when its 10th delivery has failed its 6th attempt', async () => {
    const minutes = await minutesUntilDisabled(`https://127.0.0.1:${await closedPort()}/hook`, 10, 24);
    // The 10th click is published at minute 90; its schedule ends 10 h 36 min later.
    const due = 90 + SCHEDULE_MS / MINUTE;
    expect(minutes).not.toBeNull();
    expect(minutes!).toBeGreaterThanOrEqual(due);
    expect(minutes!).toBeLessThanOrEqual(due + 10);
  });
});
