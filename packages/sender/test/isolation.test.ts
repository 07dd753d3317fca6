/**
 * Isolation (design I6), on SQLite and on PostgreSQL (where a worker frees an attempt's
 * slot as soon as its response is in): an endpoint that hangs for the full 30 s time-out, with
 * 1,000 deliveries queued, does not delay a healthy endpoint's deliveries; and no endpoint ever
 * has more requests open than its cap.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildEvent } from '@linkhooks/receiver/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../src/clock.js';
import { createSender } from '../src/engine/sender.js';
import type { SenderStore } from '../src/store/port.js';
import { createPostgresStore } from '../src/store/postgres/postgres-store.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { addEndpoint } from './helpers/endpoints.js';
import { type HttpsReceiver, startHttpsReceiver } from './helpers/https-receiver.js';
import { PG_URL, requireService } from './helpers/services.js';

const pgUp = await requireService('PostgreSQL', PG_URL);

let receiver: HttpsReceiver;
let dir: string;
beforeAll(async () => {
  receiver = await startHttpsReceiver();
  dir = mkdtempSync(join(tmpdir(), 'linkhooks-isolation-'));
});
afterAll(async () => {
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

let stores = 0;
const schemas: string[] = [];
afterAll(async () => {
  if (schemas.length === 0) return;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.end();
});

const kinds = [
  {
    kind: 'sqlite',
    up: true,
    open: () => createSqliteStore({ filename: join(dir, `isolation-${stores++}.db`) }),
  },
  {
    kind: 'postgres',
    up: pgUp,
    open: () => {
      const schema = `lh_isolation_${process.pid}_${stores++}`;
      schemas.push(schema);
      return createPostgresStore({ connectionString: PG_URL, schema, poolSize: 4 });
    },
  },
];

describe.each(kinds)('$kind', ({ kind, up, open }) => {
  it.runIf(up)('delivers to a healthy endpoint at once while another hangs with 1,000 queued', async () => {
    const store: SenderStore = open();
    await store.migrate();
    const sender = createSender({
      store,
      clock: systemClock,
      ca: receiver.certs.ca,
      allowPrivateNetworks: true,
      attemptTimeoutMs: 30_000,
      perEndpointCap: 8,
      concurrency: 64,
    });
    const account = `acct_isolation_${kind}`;
    const { endpoint: hanging } = await addEndpoint(sender, receiver, {
      account,
      route: `${kind}-hang`,
      events: ['link.created'],
      behaviour: 'hang',
    });
    await addEndpoint(sender, receiver, { account, route: `${kind}-healthy` });

    for (let i = 0; i < 1000; i++) {
      const { event, data } = buildEvent('link.created');
      await sender.publish(account, { event, data });
    }
    sender.start();
    // Let the hanging endpoint take its whole share of the workers first.
    await new Promise<void>((resolve) => {
      const check = () =>
        receiver.hits.filter((h) => h.route === `${kind}-hang`).length >= 8 ? resolve() : setImmediate(check);
      check();
    });

    const started = performance.now();
    for (let i = 0; i < 20; i++) {
      const { event, data } = buildEvent('click');
      await sender.publish(account, { event, data });
    }
    await receiver.until(
      () => receiver.received.filter((r) => r.route === `${kind}-healthy`).length === 20,
      10_000,
    );
    const elapsed = performance.now() - started;
    console.log(`[isolation] 20 healthy deliveries in ${Math.round(elapsed)} ms beside a hanging endpoint`);

    // The hanging endpoint never got more than its cap in flight; the healthy one never waited on it.
    expect(receiver.hits.filter((h) => h.route === `${kind}-hang`)).toHaveLength(8);
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

  it.runIf(up)('never has more requests open to an endpoint than its cap, and uses the cap', async () => {
    const store: SenderStore = open();
    await store.migrate();
    const sender = createSender({
      store,
      clock: systemClock,
      ca: receiver.certs.ca,
      allowPrivateNetworks: true,
      perEndpointCap: 3,
      concurrency: 8,
      // One account, one origin: their shares do not stand between the endpoints and their caps.
      perAccountCap: 8,
      perOriginCap: 8,
      perAccountAtOriginCap: 8,
    });
    const account = `acct_cap_${kind}`;
    const routes: string[] = [];
    for (const name of [`${kind}-cap-a`, `${kind}-cap-b`]) {
      await addEndpoint(sender, receiver, { account, route: name, behaviour: 'slow' });
      routes.push(name);
    }
    for (let i = 0; i < 150; i++) {
      const { event, data } = buildEvent('click');
      await sender.publish(account, { event, data });
    }
    sender.start();
    const mine = () => receiver.received.filter((r) => routes.includes(r.route));
    await receiver.until(() => mine().length === 300, 60_000);
    await sender.stop();
    await store.close();
    expect(new Set(mine().map((r) => r.deliveryId)).size).toBe(300);
    // Each endpoint had up to its cap of requests open at once, never more.
    expect(routes.map((r) => receiver.peak.get(r))).toEqual([3, 3]);
  });
});
