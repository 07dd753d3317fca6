/** The delivery log: a page of deliveries, one delivery with its attempts, an event's bytes. */
import type { DeliveryFilter, Page } from '../port.js';
import type { AttemptRecord, DeliveryRecord, EventRecord } from '../records.js';
import { type Row, toAttempt, toDelivery, toEvent, toPage } from '../rows.js';
import type { SqliteDb } from './database.js';

export const SELECT_DELIVERY = `SELECT * FROM deliveries WHERE id = ? AND account_id = ?`;
const SELECT_ATTEMPTS = `SELECT * FROM attempts WHERE delivery_id = ? ORDER BY number`;
const SELECT_EVENT = `SELECT * FROM events WHERE id = ? AND account_id = ?`;
const LIST_DELIVERIES = `
SELECT * FROM deliveries
WHERE account_id = @accountId
  AND (@endpointId IS NULL OR endpoint_id = @endpointId)
  AND (@status IS NULL OR status = @status)
  AND (@event IS NULL OR event_name = @event)
  AND (@cursor IS NULL OR id < @cursor)
ORDER BY id DESC
LIMIT @limit`;

export function listDeliveries(
  db: SqliteDb,
  accountId: string,
  filter: DeliveryFilter,
): Page<DeliveryRecord> {
  const rows = db.st(LIST_DELIVERIES).all({
    accountId,
    endpointId: filter.endpointId ?? null,
    status: filter.status ?? null,
    event: filter.event ?? null,
    cursor: filter.cursor ?? null,
    limit: filter.limit + 1,
  }) as Row[];
  return toPage(rows, filter.limit);
}

export function getDelivery(
  db: SqliteDb,
  accountId: string,
  id: string,
): { delivery: DeliveryRecord; attempts: AttemptRecord[] } | null {
  const row = db.st(SELECT_DELIVERY).get(id, accountId) as Row | undefined;
  if (!row) return null;
  return { delivery: toDelivery(row), attempts: (db.st(SELECT_ATTEMPTS).all(id) as Row[]).map(toAttempt) };
}

export function getEvent(db: SqliteDb, accountId: string, id: string): EventRecord | null {
  const row = db.st(SELECT_EVENT).get(id, accountId) as Row | undefined;
  return row ? toEvent(row) : null;
}
