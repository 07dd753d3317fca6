/** Publish: the event's bytes and its deliveries in one transaction (design I1, I2), grouped. */
import { createBatcher, type Settled } from '../batcher.js';
import { newDelivery } from '../new-delivery.js';
import type { Published, PublishTarget } from '../port.js';
import type { EventRecord } from '../records.js';
import { type Row, toDelivery, toEndpoint } from '../rows.js';
import type { SqliteDb } from './database.js';
import { SELECT_ENDPOINTS_OF_ACCOUNT } from './endpoints.js';

/** A repeated idempotency key inserts nothing: the account's unique index decides (design D37). */
const INSERT_EVENT = `
INSERT INTO events (id, account_id, name, body, created_at, idempotency_key) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING`;
const INSERT_DELIVERY = `
INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, next_attempt_at, created_at, updated_at)
VALUES (@id, @eventId, @endpointId, @accountId, @eventName, @status, @nextAttemptAt, @now, @now)`;
const SELECT_KEYED_EVENT = `SELECT id FROM events WHERE account_id = ? AND idempotency_key = ?`;
const SELECT_DELIVERIES_OF_EVENT = `SELECT * FROM deliveries WHERE event_id = ? ORDER BY endpoint_id`;

type Publish = { event: EventRecord; nextId: () => string; target: PublishTarget };

/**
 * Group commit: publishes that arrive together are written in one transaction and one WAL sync
 * (each in a savepoint of its own, so one that fails fails alone), and none is answered before
 * that commit. `synchronous`: `FULL` syncs the WAL before the publishes are answered, so a
 * published event survives a power cut, not only a crashed process; `NORMAL` trades that for
 * throughput.
 */
export function publish(db: SqliteDb, synchronous: 'FULL' | 'NORMAL') {
  const one = db.raw.transaction(({ event, nextId, target }: Publish): Published => {
    const key = event.idempotencyKey ?? null;
    const inserted = db
      .st(INSERT_EVENT)
      .run(event.id, event.accountId, event.name, Buffer.from(event.body), event.createdAt, key);
    if (inserted.changes === 0) {
      const first = db.st(SELECT_KEYED_EVENT).get(event.accountId, key) as { id: string };
      const deliveries = (db.st(SELECT_DELIVERIES_OF_EVENT).all(first.id) as Row[]).map(toDelivery);
      return { eventId: first.id, deliveries, duplicate: true };
    }
    const endpoints = (db.st(SELECT_ENDPOINTS_OF_ACCOUNT).all(event.accountId) as Row[]).map(toEndpoint);
    const deliveries = [];
    for (const endpoint of endpoints) {
      if (!endpoint.events.includes(event.name as never)) continue;
      if (target.endpointId !== undefined && endpoint.id !== target.endpointId) continue;
      const delivery = newDelivery(event, endpoint, nextId());
      db.st(INSERT_DELIVERY).run({ ...delivery, now: event.createdAt });
      deliveries.push(delivery);
    }
    return { eventId: event.id, deliveries, duplicate: false };
  });
  const all = db.immediate((batch: Publish[]) =>
    batch.map((item): Settled<Published> => {
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
  return (event: EventRecord, nextId: () => string, target: PublishTarget = {}): Promise<Published> =>
    write({ event, nextId, target });
}
