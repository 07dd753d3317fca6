/** Publish: the event's bytes and its deliveries in one transaction (design I1, I2), grouped. */
import { createBatcher, type Settled } from '../batcher.js';
import { newDelivery } from '../new-delivery.js';
import type { Published, PublishTarget } from '../port.js';
import type { EndpointRecord, EventRecord } from '../records.js';
import { type Row, toDelivery, toEndpoint } from '../rows.js';
import type { SqliteDb } from './database.js';
import { SELECT_ENDPOINTS_OF_ACCOUNT } from './endpoints.js';
import { withinBudget } from './flush-budget.js';
import type { WalSync } from './wal-sync.js';

/** A repeated idempotency key inserts nothing: the account's unique index decides (design D36). */
const INSERT_EVENT = `
INSERT INTO events (id, account_id, name, body, created_at, idempotency_key, click_id, conversion_id)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING`;
const INSERT_DELIVERY = `
INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, next_attempt_at, test,
                        created_at, updated_at)
VALUES (@id, @eventId, @endpointId, @accountId, @eventName, @status, @nextAttemptAt, @test, @now, @now)`;
const SELECT_KEYED_EVENT = `SELECT id FROM events WHERE account_id = ? AND idempotency_key = ?`;
const SELECT_DELIVERIES_OF_EVENT = `SELECT * FROM deliveries WHERE event_id = ? ORDER BY endpoint_id`;

type Publish = { event: EventRecord; nextId: () => string; target: PublishTarget };

/** The publish at `index` of a flush threw `cause`: the flush's transaction is rolled back. */
class PublishFailed extends Error {
  constructor(
    readonly index: number,
    override readonly cause: unknown,
  ) {
    super('a publish of the flush failed');
  }
}

/**
 * Group commit: publishes that arrive together are written in one transaction (one that fails
 * fails alone), and none is answered before that commit is durable. With `wal`, a publish is
 * answered once the WAL holding its commit is synced to disk, so it survives a power cut, not only
 * a crashed process; the sync runs off the event loop and is shared by the commits that wait on it
 * (design D33). Without, it is answered at the commit.
 */
export function publish(db: SqliteDb, wal: WalSync | null) {
  /** `endpointsOf`: the account's endpoints, read once per batch (nothing changes them inside it). */
  const publishOne = (
    { event, nextId, target }: Publish,
    endpointsOf: (accountId: string) => EndpointRecord[],
  ) => {
    const key = event.idempotencyKey ?? null;
    const inserted = db
      .st(INSERT_EVENT)
      .run(
        event.id,
        event.accountId,
        event.name,
        Buffer.from(event.body),
        event.createdAt,
        key,
        event.clickId ?? null,
        event.conversionId ?? null,
      );
    if (inserted.changes === 0) {
      const first = db.st(SELECT_KEYED_EVENT).get(event.accountId, key) as { id: string };
      const deliveries = (db.st(SELECT_DELIVERIES_OF_EVENT).all(first.id) as Row[]).map(toDelivery);
      return { eventId: first.id, deliveries, duplicate: true };
    }
    const deliveries = [];
    for (const endpoint of endpointsOf(event.accountId)) {
      if (!endpoint.events.includes(event.name as never)) continue;
      if (target.endpointId !== undefined && endpoint.id !== target.endpointId) continue;
      const delivery = newDelivery(event, endpoint, nextId(), target.test ?? false);
      db.st(INSERT_DELIVERY).run({ ...delivery, test: delivery.test ? 1 : 0, now: event.createdAt });
      deliveries.push(delivery);
    }
    return { eventId: event.id, deliveries, duplicate: false };
  };
  const endpointCache = () => {
    const known = new Map<string, EndpointRecord[]>();
    return (accountId: string) => {
      let endpoints = known.get(accountId);
      if (!endpoints) {
        endpoints = (db.st(SELECT_ENDPOINTS_OF_ACCOUNT).all(accountId) as Row[]).map(toEndpoint);
        known.set(accountId, endpoints);
      }
      return endpoints;
    };
  };
  // A flush writes its publishes in one transaction, and stops taking more once it has held the
  // event loop its budget; the batcher hands it the rest after a turn of the loop.
  const together = db.immediate((batch: Publish[]): Settled<Published>[] => {
    const endpointsOf = endpointCache();
    return withinBudget(batch, (item, index) => {
      try {
        return { ok: true, value: publishOne(item, endpointsOf) };
      } catch (error) {
        throw new PublishFailed(index, error);
      }
    });
  });
  // When one publish fails, the transaction is rolled back and the ones before it are written
  // again without it: it fails alone, with no savepoint per publish (two statements each) in the
  // usual case where none fails. The ones after it go into the next flush.
  const all = (batch: Publish[]): Settled<Published>[] => {
    try {
      return together(batch);
    } catch (error) {
      if (!(error instanceof PublishFailed)) throw error;
      const before = error.index > 0 ? all(batch.slice(0, error.index)) : [];
      return before.length < error.index ? before : [...before, { ok: false, error: error.cause }];
    }
  };
  const write = createBatcher((batch: Publish[]): Settled<Committed>[] => {
    const results = all(batch);
    const seq = wal?.committed() ?? 0;
    return results.map((r) => (r.ok ? { ok: true, value: { published: r.value, seq } } : r));
  });
  return async (event: EventRecord, nextId: () => string, target: PublishTarget = {}): Promise<Published> => {
    const { published, seq } = await write({ event, nextId, target });
    if (wal) await wal.durable(seq);
    return published;
  };
}

type Committed = { published: Published; seq: number };
