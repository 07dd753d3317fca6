/** Publish: the event's bytes and its deliveries in one durable transaction (design I1, I2). */
import { newDelivery } from '../new-delivery.js';
import type { PublishTarget } from '../port.js';
import type { DeliveryRecord, EventRecord } from '../records.js';
import { NOTIFY_DUE, type Pg } from './connection.js';

/** The pool's sessions commit without waiting for the WAL flush; a publish does wait (see connection.ts). */
const DURABLE_COMMIT = `SET LOCAL synchronous_commit = on`;
const INSERT_EVENT = `INSERT INTO events (id, account_id, name, body, created_at) VALUES ($1, $2, $3, $4, $5)`;
/**
 * The account's endpoints subscribed to the event, share-locked so an endpoint cannot be disabled
 * between this read and the commit: its new delivery is `skipped` or is held with the others.
 */
const LOCK_SUBSCRIBED_ENDPOINTS = `
SELECT id, enabled FROM endpoints WHERE account_id = $1 AND events ? $2 ORDER BY id FOR SHARE`;
/** All the event's deliveries in one statement: `$6..$9` are parallel arrays, one row each. */
const INSERT_DELIVERIES = `
INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, next_attempt_at, created_at, updated_at)
SELECT d.id, $1, d.endpoint_id, $2, $3, d.status, d.next_attempt_at, $4, $4
FROM unnest($5::text[], $6::text[], $7::text[], $8::bigint[]) AS d (id, endpoint_id, status, next_attempt_at)`;

export async function publish(
  pg: Pg,
  event: EventRecord,
  nextId: () => string,
  target: PublishTarget = {},
): Promise<DeliveryRecord[]> {
  return pg.tx(async (client) => {
    await client.query(DURABLE_COMMIT);
    const body = Buffer.from(event.body.buffer, event.body.byteOffset, event.body.byteLength);
    await client.query(INSERT_EVENT, [event.id, event.accountId, event.name, body, event.createdAt]);
    const endpoints = (
      await client.query<{ id: string; enabled: boolean }>(LOCK_SUBSCRIBED_ENDPOINTS, [
        event.accountId,
        event.name,
      ])
    ).rows.filter((e) => target.endpointId === undefined || e.id === target.endpointId);
    const created = endpoints.map((endpoint): DeliveryRecord => newDelivery(event, endpoint, nextId()));
    if (created.length > 0) {
      await client.query(INSERT_DELIVERIES, [
        event.id,
        event.accountId,
        event.name,
        event.createdAt,
        created.map((d) => d.id),
        created.map((d) => d.endpointId),
        created.map((d) => d.status),
        created.map((d) => d.nextAttemptAt),
      ]);
    }
    if (created.some((d) => d.status === 'pending')) await client.query(NOTIFY_DUE, [pg.schema]);
    return created;
  });
}
