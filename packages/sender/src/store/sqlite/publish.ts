/** Publish: the event's bytes and its deliveries in one transaction (design I1, I2), grouped. */
import { createBatcher, type Settled } from '../batcher.js';
import { newDelivery } from '../new-delivery.js';
import type { PublishTarget } from '../port.js';
import type { DeliveryRecord, EventRecord } from '../records.js';
import { type Row, toEndpoint } from '../rows.js';
import type { SqliteDb } from './database.js';
import { SELECT_ENDPOINTS_OF_ACCOUNT } from './endpoints.js';

const INSERT_EVENT = `INSERT INTO events (id, account_id, name, body, created_at) VALUES (?, ?, ?, ?, ?)`;
const INSERT_DELIVERY = `
INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, next_attempt_at, test,
                        created_at, updated_at)
VALUES (@id, @eventId, @endpointId, @accountId, @eventName, @status, @nextAttemptAt, @test, @now, @now)`;

type Publish = { event: EventRecord; nextId: () => string; target: PublishTarget };

/**
 * Group commit: publishes that arrive together are written in one transaction and one WAL sync
 * (each in a savepoint of its own, so one that fails fails alone), and none is answered before
 * that commit. `synchronous`: `FULL` syncs the WAL before the publishes are answered, so a
 * published event survives a power cut, not only a crashed process; `NORMAL` trades that for
 * throughput.
 */
export function publish(db: SqliteDb, synchronous: 'FULL' | 'NORMAL') {
  const one = db.raw.transaction(({ event, nextId, target }: Publish): DeliveryRecord[] => {
    db.st(INSERT_EVENT).run(event.id, event.accountId, event.name, Buffer.from(event.body), event.createdAt);
    const endpoints = (db.st(SELECT_ENDPOINTS_OF_ACCOUNT).all(event.accountId) as Row[]).map(toEndpoint);
    const created: DeliveryRecord[] = [];
    for (const endpoint of endpoints) {
      if (!endpoint.events.includes(event.name as never)) continue;
      if (target.endpointId !== undefined && endpoint.id !== target.endpointId) continue;
      const delivery = newDelivery(event, endpoint, nextId(), target.test ?? false);
      db.st(INSERT_DELIVERY).run({ ...delivery, test: delivery.test ? 1 : 0, now: event.createdAt });
      created.push(delivery);
    }
    return created;
  });
  const all = db.immediate((batch: Publish[]) =>
    batch.map((item): Settled<DeliveryRecord[]> => {
      try {
        return { ok: true, value: one(item) };
      } catch (error) {
        return { ok: false, error };
      }
    }),
  );
  const write = createBatcher((batch: Publish[]) => {
    if (synchronous === 'NORMAL') return all(batch);
    db.raw.pragma('synchronous = FULL');
    try {
      return all(batch);
    } finally {
      db.raw.pragma('synchronous = NORMAL');
    }
  });
  return (event: EventRecord, nextId: () => string, target: PublishTarget = {}): Promise<DeliveryRecord[]> =>
    write({ event, nextId, target });
}
