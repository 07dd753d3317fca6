/** Publish: the event's bytes and its deliveries in one transaction (design I1, I2), grouped. */
import { isClaimable } from '../../domain/delivery-state.js';
import { newDelivery } from '../new-delivery.js';
import type { Published, PublishTarget } from '../port.js';
import type { EndpointRecord, EventRecord } from '../records.js';
import { type Row, toDelivery, toEndpoint } from '../rows.js';
import type { SqliteDb } from './database.js';
import { lowerDue } from './endpoint-due.js';
import { SELECT_ENDPOINTS_OF_ACCOUNT } from './endpoints.js';
import type { WalSync } from './wal-sync.js';
import type { TxMemo, WriteQueue } from './write-queue.js';

/** A repeated idempotency key inserts nothing: the account's unique index decides (design D36). */
const INSERT_EVENT = `
INSERT INTO events (id, account_id, name, body, created_at, idempotency_key, click_id, conversion_id)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING`;
const INSERT_DELIVERY = `
INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, next_attempt_at, test,
                        created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
const SELECT_KEYED_EVENT = `SELECT id FROM events WHERE account_id = ? AND idempotency_key = ?`;
const SELECT_DELIVERIES_OF_EVENT = `SELECT * FROM deliveries WHERE event_id = ? ORDER BY endpoint_id`;

/**
 * Group commit: publishes that arrive together are written in one transaction (one that fails
 * fails alone), with the claims and records of that turn (write-queue.ts), and none is answered
 * before that commit is durable. With `wal`, a publish is answered once the WAL holding its commit
 * is synced to disk, so it survives a power cut, not only a crashed process; the sync runs off the
 * event loop and is shared by the commits that wait on it (design D33). Without, it is answered at
 * the commit.
 */
export function publish(db: SqliteDb, write: WriteQueue, wal: WalSync | null) {
  /** An account's endpoints, read from the database (the memo below reads them once per transaction). */
  const readEndpoints = (accountId: string): EndpointRecord[] =>
    (db.st(SELECT_ENDPOINTS_OF_ACCOUNT).all(accountId) as Row[]).map(toEndpoint);
  const publishOne = (
    event: EventRecord,
    nextId: () => string,
    target: PublishTarget,
    memo: TxMemo,
  ): Published => {
    const key = event.idempotencyKey ?? null;
    // The body is bound as it is, a view or not: SQLite copies a blob's bytes as it binds them.
    const inserted = db
      .st(INSERT_EVENT)
      .run(
        event.id,
        event.accountId,
        event.name,
        event.body,
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
    // Once per transaction: the transaction's other publishes to the account read the memo's copy.
    for (const endpoint of memo.endpointsOf(event.accountId, readEndpoints)) {
      if (!endpoint.events.includes(event.name as never)) continue;
      if (target.endpointId !== undefined && endpoint.id !== target.endpointId) continue;
      const delivery = newDelivery(event, endpoint, nextId(), target.test ?? false);
      db.st(INSERT_DELIVERY).run(
        delivery.id,
        delivery.eventId,
        delivery.endpointId,
        delivery.accountId,
        delivery.eventName,
        delivery.status,
        delivery.nextAttemptAt,
        delivery.test ? 1 : 0,
        event.createdAt,
        event.createdAt,
      );
      if (isClaimable(delivery.status) && delivery.nextAttemptAt !== null) {
        lowerDue(db, endpoint.id, delivery.nextAttemptAt);
      }
      deliveries.push(delivery);
    }
    return { eventId: event.id, deliveries, duplicate: false };
  };
  // Commits that held publishes, each counted at the first of its publishes to come back: the write
  // queue answers a transaction's writes together, each commit with a number above the last's, and
  // its next commit comes a turn of the event loop later, once these answers have run.
  let commits = 0;
  let lastCommit = Number.NEGATIVE_INFINITY;
  const count = (commit: number) => {
    if (commit > lastCommit) {
      lastCommit = commit;
      commits++;
    }
  };
  // Chained, not async: a suspended async function would wait with each publish (design D62).
  const publishEvent = (
    event: EventRecord,
    nextId: () => string,
    target: PublishTarget = {},
  ): Promise<Published> => {
    const queued = () => write((memo) => publishOne(event, nextId, target, memo));
    // Held while a sync runs that no commit waits beyond yet (WalSync.holdCommit): committed now,
    // it would wait for the next sync all the same, so the publishes of one sync's time share one
    // commit after it instead of a commit for each turn's few.
    const hold = wal?.holdCommit();
    const written = hold ? hold.then(queued) : queued();
    return written.then(({ value, commit }) => {
      count(commit);
      return wal ? wal.durable(commit).then(() => value) : value;
    });
  };
  return { publish: publishEvent, commits: () => commits };
}
