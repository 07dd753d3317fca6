/** The delivery log: a page of deliveries, one delivery with its attempts, an event's bytes. */
import type { DeliveryFilter, Page } from '../port.js';
import type { AttemptRecord, DeliveryRecord, EventRecord } from '../records.js';
import { toAttempt, toDelivery, toEvent, toPage } from '../rows.js';
import type { Pg } from './connection.js';

export const SELECT_DELIVERY = `SELECT * FROM deliveries WHERE id = $1 AND account_id = $2`;
const SELECT_ATTEMPTS = `SELECT * FROM attempts WHERE delivery_id = $1 ORDER BY number`;
const SELECT_EVENT = `SELECT * FROM events WHERE id = $1 AND account_id = $2`;
const LIST_DELIVERIES = `
SELECT * FROM deliveries
WHERE account_id = $1
  AND ($2::text IS NULL OR endpoint_id = $2::text)
  AND ($3::text IS NULL OR status = $3::text)
  AND ($4::text IS NULL OR event_name = $4::text)
  AND ($5::text IS NULL OR id < $5::text)
ORDER BY id DESC
LIMIT $6`;

export async function listDeliveries(
  pg: Pg,
  accountId: string,
  filter: DeliveryFilter,
): Promise<Page<DeliveryRecord>> {
  const rows = await pg.rows(LIST_DELIVERIES, [
    accountId,
    filter.endpointId ?? null,
    filter.status ?? null,
    filter.event ?? null,
    filter.cursor ?? null,
    filter.limit + 1,
  ]);
  return toPage(rows, filter.limit);
}

export async function getDelivery(
  pg: Pg,
  accountId: string,
  id: string,
): Promise<{ delivery: DeliveryRecord; attempts: AttemptRecord[] } | null> {
  const [row] = await pg.rows(SELECT_DELIVERY, [id, accountId]);
  if (!row) return null;
  return { delivery: toDelivery(row), attempts: (await pg.rows(SELECT_ATTEMPTS, [id])).map(toAttempt) };
}

export async function getEvent(pg: Pg, accountId: string, id: string): Promise<EventRecord | null> {
  const [row] = await pg.rows(SELECT_EVENT, [id, accountId]);
  return row ? toEvent(row) : null;
}
