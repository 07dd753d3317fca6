/**
 * Publish (design I1, I2), with group commit: the publishes that arrive while the previous batch
 * is being written go out together as one statement, one transaction and one WAL flush, and none
 * is answered before that commit. The statement writes the events, finds each one's subscribed
 * endpoints (share-locked, so an endpoint cannot be disabled between this read and the commit:
 * a new delivery is `skipped`, or is held with the others), writes their deliveries and wakes the
 * workers everywhere.
 */
import { COUNT_DIGITS, ID_ALPHABET, newRun } from '../../domain/ids.js';
import { SenderError } from '../../errors.js';
import { createBatcher, type Settled } from '../batcher.js';
import type { Published, PublishTarget } from '../port.js';
import type { DeliveryRecord, EventRecord } from '../records.js';
import { toDelivery } from '../rows.js';
import { CLAIMABLE_SQL, KEPT_ENDPOINT_SQL, newDeliverySql } from '../sql-rules.js';
import { DUE_CHANNEL, type Pg } from './connection.js';

/**
 * `$1..$3`, `$5`, `$6`, `$8..$11`: the events as parallel arrays (id, account, name, created at, the
 * one endpoint of a test event or NULL, the idempotency key or NULL, whether it is a test event:
 * design D42, the click and conversion ids or NULL: design D47), `$7` the schema (the wake-up's
 * payload). The bodies are one binary value (`$4`), each event's from its start (`$12`, counted
 * from 1) for its length (`$13`): an array of bytea goes out as hex text, built on the event loop.
 * A delivery's id is made here, in the form of `newId`: the event's time part, then the
 * statement's run (`$14`, newRun) and the delivery's count in the statement (`numbered`,
 * COUNT_DIGITS digits), counted in the order of the events' ids, then the endpoints'. So the
 * deliveries this process makes sort, and are inserted, in the order they were made, as newId's
 * do. With 16 random digits each, those of events created in one millisecond (a batch request's)
 * came in random order: each statement's inserts, and the claims and records after them, went to
 * pages all over the table and its indexes, and the store's database CPU per delivery was 1.22–1.25
 * times what it is (bench/store-cycle.mjs --at-once). An id is no secret: every read of a delivery
 * is its account's, and newId's ids count up within a millisecond the same way.
 *
 * The accounts that have a row are share-locked, so deleting one (delete-account.ts) waits for
 * this commit; an account marked deleted, or whose row is gone after a deletion, is refused and
 * none of its events is inserted (design D37). An account with no row at all (the library's own
 * account ids) publishes as ever.
 *
 * An event whose key the account has used already is not inserted (the unique index decides, and
 * waits for a concurrent insert of the same key to commit or roll back: design D36), and makes no
 * deliveries. Each inserted event answers one row with `inserted_id` (and its deliveries' columns,
 * NULL when it has none): an event missing from the answer was a repeat. `targets` reads the
 * inserted ids as an array, once, not by a join that the generic plan made a nested loop reading
 * them all again for each event and endpoint (see RECORD_ATTEMPTS_FAST).
 *
 * Each endpoint given a claimable delivery has its next due time lowered to it (endpoint-due.ts),
 * under the endpoint's share lock. The entries already as early as the batch's earliest new
 * delivery (a batch's are due at about one time) are read by key with a share lock
 * (`early_entries`), which checks the newest version, not the snapshot's: this statement's snapshot
 * may be older than an entry moved on while it waited for the endpoint's lock, and a key share lock
 * would keep the snapshot's version when the change since was not to the key. Many publishes hold
 * that lock at once, so publishes to an endpoint whose entry is as early never wait on each other
 * for it (the lock is still a write to the row). Any other entry is left to the insert, which
 * locks it alone and lowers it if later: publishes lowering one entry queue there, the later ones
 * finding it lowered. A publish can hold an entry's share lock while its insert waits for another
 * entry's lock (an entry moved on after its snapshot, or one due between two batches' times): two
 * publishes that meet so, each holding what the other waits for, deadlock, and the victim runs
 * again (connection.ts). Entries long due, or later than both batches, never do.
 */
const made = newDeliverySql('t.enabled', 't.paused', 't.created_at');

/** The number `n` (SQL) as COUNT_DIGITS digits of ID_ALPHABET, the first the most significant. */
const countDigitsSql = (n: string) =>
  Array.from(
    { length: COUNT_DIGITS },
    (_, i) => `substr('${ID_ALPHABET}', ((${n} >> ${5 * (COUNT_DIGITS - 1 - i)}) & 31)::int + 1, 1)`,
  ).join(' || ');

export const PUBLISH_EVENTS = `
WITH input AS (
  SELECT t.id, t.account_id, t.name, substring($4::bytea FROM t.body_from FOR t.body_length) AS body,
         t.created_at, t.target, t.idempotency_key, t.test, t.click_id, t.conversion_id
  FROM unnest($1::text[], $2::text[], $3::text[], $12::int[], $13::int[], $5::bigint[], $6::text[], $8::text[],
              $9::boolean[], $10::text[], $11::text[])
    AS t(id, account_id, name, body_from, body_length, created_at, target, idempotency_key, test, click_id,
         conversion_id)
),
live AS (
  SELECT a.id FROM accounts a WHERE a.id IN (SELECT account_id FROM input) AND a.deleted_at IS NULL
  ORDER BY a.id FOR SHARE
),
refused AS (
  SELECT DISTINCT i.account_id FROM input i
  WHERE i.account_id NOT IN (SELECT id FROM live)
    AND (EXISTS (SELECT 1 FROM accounts a WHERE a.id = i.account_id)
         OR EXISTS (SELECT 1 FROM deleted_accounts g WHERE g.id = i.account_id))
),
events_in AS (
  INSERT INTO events (id, account_id, name, body, created_at, idempotency_key, click_id, conversion_id)
  SELECT id, account_id, name, body, created_at, idempotency_key, click_id, conversion_id FROM input
  WHERE account_id NOT IN (SELECT account_id FROM refused)
  ON CONFLICT (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
  RETURNING id
),
targets AS (
  SELECT i.id AS event_id, i.account_id, i.name, i.created_at, i.test, e.id AS endpoint_id, e.enabled, e.paused,
         e.deleted_at
  FROM input i
  JOIN endpoints e ON e.account_id = i.account_id AND e.events ? i.name
  WHERE i.id = ANY (ARRAY(SELECT id FROM events_in)) AND (i.target IS NULL OR e.id = i.target)
  ORDER BY e.id
  FOR SHARE OF e
),
-- An endpoint being deleted is passed over (design D78), as read under its lock: in the join, the
-- condition made the plan without statistics read the input again for each endpoint.
numbered AS (
  SELECT t.*, row_number() OVER (ORDER BY t.event_id, t.endpoint_id) AS n FROM targets t
  WHERE ${KEPT_ENDPOINT_SQL}
),
created AS (
  INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, next_attempt_at,
                          test, created_at, updated_at)
  SELECT 'dlv_' || substr(t.event_id, 5, 10) || $14::text || ${countDigitsSql('t.n')},
         t.event_id, t.endpoint_id, t.account_id, t.name,
         ${made.status},
         ${made.nextAttemptAt},
         t.test, t.created_at, t.created_at
  FROM numbered t
  ORDER BY t.n
  RETURNING *
),
due_now AS (
  SELECT c.endpoint_id, min(c.next_attempt_at) AS at FROM created c
  WHERE c.status IN ${CLAIMABLE_SQL} GROUP BY c.endpoint_id
),
early_entries AS MATERIALIZED (
  SELECT q.endpoint_id FROM endpoint_due q
  WHERE q.endpoint_id = ANY (ARRAY(SELECT endpoint_id FROM due_now))
    AND q.next_due_at <= (SELECT min(at) FROM due_now)
  FOR SHARE OF q
),
lowered AS (
  INSERT INTO endpoint_due (endpoint_id, next_due_at)
  SELECT n.endpoint_id, n.at FROM due_now n
  WHERE n.endpoint_id NOT IN (SELECT endpoint_id FROM early_entries)
  ORDER BY n.endpoint_id
  ON CONFLICT (endpoint_id) DO UPDATE SET next_due_at = excluded.next_due_at
  WHERE excluded.next_due_at < endpoint_due.next_due_at
),
woken AS (
  SELECT pg_notify('${DUE_CHANNEL}', $7) FROM (SELECT 1 FROM created WHERE status = 'pending' LIMIT 1) AS due
)
SELECT n.id AS inserted_id, c.*, (SELECT count(*) FROM woken) AS woken
FROM events_in n LEFT JOIN created c ON c.event_id = n.id ORDER BY n.id, c.endpoint_id`;

/** Of the accounts given, those deleted or being deleted: their events were refused. */
const SELECT_DELETED = `
SELECT id FROM accounts WHERE id = ANY($1::text[]) AND deleted_at IS NOT NULL
UNION SELECT id FROM deleted_accounts WHERE id = ANY($1::text[])`;

/** The first publish of each repeated key, with its deliveries as they are now (NULL columns if none). */
const SELECT_FIRST_OF_KEYS = `
SELECT ev.id AS first_id, ev.account_id AS first_account, ev.idempotency_key AS first_key, d.*
FROM events ev LEFT JOIN deliveries d ON d.event_id = ev.id
WHERE (ev.account_id, ev.idempotency_key) IN (SELECT * FROM unnest($1::text[], $2::text[]))
ORDER BY ev.id, d.endpoint_id`;

type Publish = { event: EventRecord; target: PublishTarget };

/** PUBLISH_EVENTS's parameters for `batch` ($1 to $14), `schema` the wake-up's payload. */
export function publishParams(batch: Publish[], schema: string): unknown[] {
  const column = <T>(f: (p: Publish) => T) => batch.map(f);
  const bodies = column((p) => p.event.body);
  const starts: number[] = [];
  let at = 1; // substring counts from 1
  for (const body of bodies) {
    starts.push(at);
    at += body.byteLength;
  }
  return [
    column((p) => p.event.id),
    column((p) => p.event.accountId),
    column((p) => p.event.name),
    Buffer.concat(bodies),
    column((p) => p.event.createdAt),
    column((p) => p.target.endpointId ?? null),
    schema,
    column((p) => p.event.idempotencyKey ?? null),
    column((p) => p.target.test ?? false),
    column((p) => p.event.clickId ?? null),
    column((p) => p.event.conversionId ?? null),
    starts,
    bodies.map((b) => b.byteLength),
    newRun(),
  ];
}

export function publish(pg: Pg) {
  /** Statements of publishes that committed: each is a transaction of its own. */
  let commits = 0;
  const writeAll = async (batch: Publish[]): Promise<Settled<Published>[]> => {
    const rows = await pg.durable('publish_events', PUBLISH_EVENTS, publishParams(batch, pg.schema));
    commits++;
    const inserted = new Map<string, DeliveryRecord[]>();
    for (const row of rows) {
      const deliveries = inserted.get(row.inserted_id as string) ?? [];
      if (row.id !== null) deliveries.push(toDelivery(row));
      inserted.set(row.inserted_id as string, deliveries);
    }
    const missing = batch.filter((p) => !inserted.has(p.event.id));
    const deleted = missing.length > 0 ? await deletedOf(missing) : new Set<string>();
    const repeats = missing.filter((p) => !deleted.has(p.event.accountId));
    const firsts = repeats.length > 0 ? await firstsOf(repeats) : new Map<string, Published>();
    return batch.map((p): Settled<Published> => {
      const deliveries = inserted.get(p.event.id);
      if (deliveries) return { ok: true, value: { eventId: p.event.id, deliveries, duplicate: false } };
      if (deleted.has(p.event.accountId)) {
        return { ok: false, error: new SenderError('not_found', `no account ${p.event.accountId}`) };
      }
      const first = firsts.get(keyOf(p.event));
      // Only a key repeated can leave an event out; its first publish was committed before.
      if (!first) return { ok: false, error: new Error(`event ${p.event.id} was not stored`) };
      return { ok: true, value: first };
    });
  };
  const deletedOf = async (missing: Publish[]): Promise<Set<string>> => {
    const rows = await pg.rows(SELECT_DELETED, [[...new Set(missing.map((p) => p.event.accountId))]]);
    return new Set(rows.map((r) => r.id as string));
  };
  /** Read after the insert: a repeat's first publish committed before the insert returned. */
  const firstsOf = async (repeats: Publish[]): Promise<Map<string, Published>> => {
    const rows = await pg.rows(SELECT_FIRST_OF_KEYS, [
      repeats.map((p) => p.event.accountId),
      repeats.map((p) => p.event.idempotencyKey ?? null),
    ]);
    const firsts = new Map<string, Published>();
    for (const row of rows) {
      const key = keyOf({ accountId: row.first_account as string, idempotencyKey: row.first_key as string });
      const first = firsts.get(key) ?? { eventId: row.first_id as string, deliveries: [], duplicate: true };
      if (row.id !== null) first.deliveries.push(toDelivery(row));
      firsts.set(key, first);
    }
    return firsts;
  };
  // A delivery id another process made in the same millisecond with the same run (design D66):
  // the statement is written again, with a run of its own.
  const writeRun = async (batch: Publish[]): Promise<Settled<Published>[]> => {
    try {
      return await writeAll(batch);
    } catch (error) {
      if (!deliveryIdTaken(error)) throw error;
      return writeAll(batch);
    }
  };
  // A statement that fails was rolled back whole: each publish of the batch is then written again
  // in a statement of its own, so only the one the database refuses sees the error.
  const write = createBatcher(async (batch: Publish[]): Promise<Settled<Published>[]> => {
    try {
      return await writeRun(batch);
    } catch (error) {
      if (batch.length === 1) return [{ ok: false, error }];
      return Promise.all(
        batch.map(
          async (p) => (await writeRun([p]).catch((e: unknown) => [{ ok: false as const, error: e }]))[0]!,
        ),
      );
    }
  });
  return {
    publish: (event: EventRecord, _nextId: () => string, target: PublishTarget = {}): Promise<Published> =>
      write({ event, target }),
    commits: () => commits,
  };
}

/** A unique violation of the deliveries' key: an id made twice. */
const deliveryIdTaken = (error: unknown) => {
  const { code, constraint } = error as { code?: string; constraint?: string };
  return code === '23505' && constraint === 'deliveries_pkey';
};

const keyOf = (e: Pick<EventRecord, 'accountId' | 'idempotencyKey'>) =>
  JSON.stringify([e.accountId, e.idempotencyKey]);
