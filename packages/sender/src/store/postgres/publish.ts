/**
 * Publish (design I1, I2), with group commit: the publishes that arrive while the previous batch
 * is being written go out together as one statement, one transaction and one WAL flush, and none
 * is answered before that commit. The statement writes the events, finds each one's subscribed
 * endpoints (share-locked, so an endpoint cannot be disabled between this read and the commit:
 * a new delivery is `skipped`, or is held with the others), writes their deliveries and wakes the
 * workers everywhere.
 */
import { createBatcher, type Settled } from '../batcher.js';
import type { PublishTarget } from '../port.js';
import type { DeliveryRecord, EventRecord } from '../records.js';
import { toDelivery } from '../rows.js';
import { newDeliverySql } from '../sql-rules.js';
import { DUE_CHANNEL, type Pg } from './connection.js';

/**
 * `$1..$6`: the events as parallel arrays (id, account, name, body, created at, the one endpoint
 * of a test event or NULL), `$7` the schema (the wake-up's payload), `$8` whether each is a test
 * event (design D44). A delivery's id is made here,
 * in the form of `newId`: the event's time part and 16 random digits (hex digits are Crockford
 * base32 digits too), so ids still sort by creation time.
 */
const made = newDeliverySql('t.enabled', 't.created_at');

export const PUBLISH_EVENTS = `
WITH input AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[], $5::bigint[], $6::text[], $8::boolean[])
    AS t(id, account_id, name, body, created_at, target, test)
),
events_in AS (
  INSERT INTO events (id, account_id, name, body, created_at)
  SELECT id, account_id, name, body, created_at FROM input
),
targets AS (
  SELECT i.id AS event_id, i.account_id, i.name, i.created_at, i.test, e.id AS endpoint_id, e.enabled
  FROM input i JOIN endpoints e ON e.account_id = i.account_id AND e.events ? i.name
  WHERE i.target IS NULL OR e.id = i.target
  ORDER BY e.id
  FOR SHARE OF e
),
created AS (
  INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, next_attempt_at,
                          test, created_at, updated_at)
  SELECT 'dlv_' || substr(t.event_id, 5, 10) || upper(substr(md5(gen_random_uuid()::text), 1, 16)),
         t.event_id, t.endpoint_id, t.account_id, t.name,
         ${made.status},
         ${made.nextAttemptAt},
         t.test, t.created_at, t.created_at
  FROM targets t
  RETURNING *
),
woken AS (
  SELECT pg_notify('${DUE_CHANNEL}', $7) FROM (SELECT 1 FROM created WHERE status = 'pending' LIMIT 1) AS due
)
SELECT c.*, (SELECT count(*) FROM woken) AS woken FROM created c ORDER BY c.endpoint_id`;

type Publish = { event: EventRecord; target: PublishTarget };

export function publish(pg: Pg) {
  const writeAll = async (batch: Publish[]): Promise<Settled<DeliveryRecord[]>[]> => {
    const column = <T>(f: (p: Publish) => T) => batch.map(f);
    const rows = await pg.durable('publish_events', PUBLISH_EVENTS, [
      column((p) => p.event.id),
      column((p) => p.event.accountId),
      column((p) => p.event.name),
      column((p) => Buffer.from(p.event.body.buffer, p.event.body.byteOffset, p.event.body.byteLength)),
      column((p) => p.event.createdAt),
      column((p) => p.target.endpointId ?? null),
      pg.schema,
      column((p) => p.target.test ?? false),
    ]);
    const byEvent = new Map<string, DeliveryRecord[]>(batch.map((p) => [p.event.id, []]));
    for (const row of rows) byEvent.get(row.event_id as string)!.push(toDelivery(row));
    return batch.map((p) => ({ ok: true, value: byEvent.get(p.event.id)! }));
  };
  // A statement that fails was rolled back whole: each publish of the batch is then written again
  // in a statement of its own, so only the one the database refuses sees the error.
  const write = createBatcher(async (batch: Publish[]): Promise<Settled<DeliveryRecord[]>[]> => {
    try {
      return await writeAll(batch);
    } catch (error) {
      if (batch.length === 1) return [{ ok: false, error }];
      return Promise.all(
        batch.map(
          async (p) => (await writeAll([p]).catch((e: unknown) => [{ ok: false as const, error: e }]))[0]!,
        ),
      );
    }
  });
  return (event: EventRecord, _nextId: () => string, target: PublishTarget = {}): Promise<DeliveryRecord[]> =>
    write({ event, target });
}
