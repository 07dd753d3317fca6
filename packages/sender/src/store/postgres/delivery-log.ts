/** The delivery log: a page of deliveries, one delivery with its attempts, an event's bytes. */
import type { DeliveryFilter, Page } from '../port.js';
import type { AttemptRecord, DeliveryRecord, EventRecord } from '../records.js';
import { toAttempt, toDelivery, toEvent, toPage } from '../rows.js';
import type { Pg } from './connection.js';

export const SELECT_DELIVERY = `SELECT * FROM deliveries WHERE id = $1 AND account_id = $2`;
const SELECT_ATTEMPTS = `SELECT * FROM attempts WHERE delivery_id = $1 ORDER BY number`;
const SELECT_EVENT = `SELECT * FROM events WHERE id = $1 AND account_id = $2`;
/**
 * The account's events a search names (design D47): by our id, the platform's id, a click or a
 * conversion id, each through an index of its own. `$1` is the account, `$S` the searched text.
 */
const SEARCHED_EVENTS = `
SELECT id FROM events WHERE id = $S AND account_id = $1
UNION SELECT id FROM events WHERE account_id = $1 AND idempotency_key = $S
UNION SELECT id FROM events WHERE account_id = $1 AND click_id = $S
UNION SELECT id FROM events WHERE account_id = $1 AND conversion_id = $S`;
/**
 * A page of the log, newest first. Only the filters given are in the statement (each a fixed
 * fragment, values bound), so the planner can walk the index that fits (the searched events'
 * deliveries, else by endpoint, else by account) from the cursor on: a page costs the same at the
 * top of a million rows as deep inside.
 */
export function listQuery(accountId: string, filter: DeliveryFilter): { text: string; values: unknown[] } {
  const values: unknown[] = [accountId];
  const where = ['account_id = $1'];
  const add = (column: string, op: string, value: unknown) => {
    values.push(value);
    where.push(`${column} ${op} $${values.length}`);
  };
  if (filter.endpointId !== undefined) add('endpoint_id', '=', filter.endpointId);
  if (filter.status !== undefined) add('status', '=', filter.status);
  if (filter.event !== undefined) add('event_name', '=', filter.event);
  if (filter.cursor !== undefined) add('id', '<', filter.cursor);
  if (filter.search !== undefined) {
    values.push(filter.search);
    where.push(`event_id IN (${SEARCHED_EVENTS.replaceAll('$S', `$${values.length}`)})`);
  }
  values.push(filter.limit + 1);
  return {
    text: `SELECT * FROM deliveries WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT $${values.length}`,
    values,
  };
}

export async function listDeliveries(
  pg: Pg,
  accountId: string,
  filter: DeliveryFilter,
): Promise<Page<DeliveryRecord>> {
  const { text, values } = listQuery(accountId, filter);
  const rows = await pg.rows(text, values);
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
