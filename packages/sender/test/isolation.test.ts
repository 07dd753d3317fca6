/**
 * Isolation (DESIGN invariant 6): an endpoint that hangs for the full 30 s time-out, with 1,000
 * deliveries queued, does not delay a healthy endpoint's deliveries.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildEvent } from '@linkhooks/receiver/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../src/clock.js';
import { createSender } from '../src/engine.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { type HttpsReceiver, startHttpsReceiver } from './helpers/https-receiver.js';
import { createTestCertificates, type TestCertificates } from './helpers/test-ca.js';

let certs: TestCertificates;
let receiver: HttpsReceiver;
let dir: string;
beforeAll(async () => {
  certs = createTestCertificates();
  receiver = await startHttpsReceiver(certs);
  dir = mkdtempSync(join(tmpdir(), 'linkhooks-isolation-'));
});
afterAll(async () => {
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

it('delivers to a healthy endpoint at once while another hangs with 1,000 queued', async () => {
  const store = createSqliteStore({ filename: join(dir, 'isolation.db') });
  await store.migrate();
  const sender = createSender({
    store,
    clock: systemClock,
    ca: certs.ca,
    allowPrivateNetworks: true,
    attemptTimeoutMs: 30_000,
    perEndpointCap: 8,
    concurrency: 64,
  });
  const account = 'acct_isolation';
  const hanging = await sender.createEndpoint(account, {
    url: `${receiver.origin}/hooks/hang`,
    events: ['link.created'],
  });
  const healthy = await sender.createEndpoint(account, {
    url: `${receiver.origin}/hooks/healthy`,
    events: ['click'],
  });
  receiver.route('hang', hanging.secret);
  receiver.route('healthy', healthy.secret);
  receiver.behave('hang', 'hang');

  for (let i = 0; i < 1000; i++) {
    const { event, data } = buildEvent('link.created');
    await sender.publish(account, { event, data });
  }
  sender.start();
  // Let the hanging endpoint take its whole share of the workers first.
  await new Promise<void>((resolve) => {
    const check = () =>
      receiver.hits.filter((h) => h.route === 'hang').length >= 8 ? resolve() : setImmediate(check);
    check();
  });

  const started = performance.now();
  for (let i = 0; i < 20; i++) {
    const { event, data } = buildEvent('click');
    await sender.publish(account, { event, data });
  }
  await receiver.until(() => receiver.received.filter((r) => r.route === 'healthy').length === 20, 10_000);
  const elapsed = performance.now() - started;
  console.log(`[isolation] 20 healthy deliveries in ${Math.round(elapsed)} ms beside a hanging endpoint`);

  // The hanging endpoint never got more than its cap in flight; the healthy one never waited on it.
  expect(receiver.hits.filter((h) => h.route === 'hang')).toHaveLength(8);
  expect(elapsed).toBeLessThan(10_000);
  // Every delivery of the hanging endpoint is still waiting (8 of them under a lease), none lost.
  const waiting = await sender.listDeliveries(account, {
    endpointId: hanging.id,
    status: 'pending',
    limit: 2000,
  });
  expect(waiting.items).toHaveLength(1000);
  await sender.stop(0);
  await store.close();
});
