/** The delivery log: a page of deliveries, one delivery with its attempts, an event's bytes. */
import {
  endpointOfAccountSql,
  eventFilteredSql,
  eventPage,
  latestAttemptsSql,
  newestFirstSql,
  readsEventWindows,
} from '../log-page-sql.js';
import type { DeliveryFilter, Page } from '../port.js';
import type { AttemptRecord, DeliveryRecord, EventRecord } from '../records.js';
import { toAttempt, toDelivery, toEvent, toPage } from '../rows.js';
import type { Pg } from './connection.js';

export const SELECT_DELIVERY = `SELECT * FROM deliveries WHERE id = $1 AND account_id = $2`;
const SELECT_ATTEMPTS = latestAttemptsSql('$1');
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
 * fragment, values bound). A search reads the searched events' deliveries (few), by event. Any
 * other page reads the index by endpoint, else by account, both keyed by status then id: a page
 * costs the same at the top of a million rows as deep inside, whichever status it asks for
 * (newestFirstSql), and a page filtered by event reads a bounded window of each range
 * (eventFilteredSql). A range's status is bounded from both sides and its rows ordered by status
 * then id, not `status =` and `ORDER BY id`: with an equality the generic plan may walk the primary
 * key newest first and filter, when its guess of the rows of a status is far off (a million
 * delivered read for three failed). Ordered by status, only those two indexes give the order; the
 * cursor bounds the range with the status, so a deep page starts where it is.
 */
/**
 * A page's ranges read in their index's order, never gathered and sorted: the generic plan's guess
 * of a range's rows (an account's share of the log over its count of accounts) can be far below
 * what one account holds, and then reading the whole range and sorting it looked cheaper than
 * walking the index to the page's end (a window of 1,000 read 40,000 rows so). Sorting what the
 * ranges return stays, as no plan is without it.
 */
export const ORDERED_RANGES = 'SET LOCAL enable_sort = off';

export function listQuery(accountId: string, filter: DeliveryFilter): { text: string; values: unknown[] } {
  const values: unknown[] = [accountId];
  const param = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  const where = ['account_id = $1'];
  if (filter.endpointId !== undefined) where.push(endpointOfAccountSql(param(filter.endpointId), '$1'));
  const event = filter.event === undefined ? null : param(filter.event);
  const cursor = filter.cursor === undefined ? null : param(filter.cursor);
  const status = filter.status === undefined ? null : param(filter.status);
  const limit = param(filter.limit + 1);
  if (filter.search !== undefined) {
    if (event !== null) where.push(`event_name = ${event}`);
    if (cursor !== null) where.push(`id < ${cursor}`);
    if (status !== null) where.push(`status = ${status}`);
    where.push(`event_id IN (${SEARCHED_EVENTS.replaceAll('$S', param(filter.search))})`);
    return {
      text: `SELECT * FROM deliveries WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ${limit}`,
      values,
    };
  }
  const rangeOf = (s: string, rows: string) => {
    const upper = cursor === null ? `status <= ${s}` : `(status, id) < (${s}, ${cursor})`;
    const range = [...where, `status >= ${s}`, upper].join(' AND ');
    return `SELECT * FROM deliveries WHERE ${range} ORDER BY status DESC, id DESC LIMIT ${rows}`;
  };
  return {
    text:
      event !== null
        ? eventFilteredSql(rangeOf, status, event, limit)
        : newestFirstSql(rangeOf, status, limit),
    values,
  };
}

export async function listDeliveries(
  pg: Pg,
  accountId: string,
  filter: DeliveryFilter,
): Promise<Page<DeliveryRecord>> {
  const { text, values } = listQuery(accountId, filter);
  const rows =
    filter.search === undefined
      ? await pg.tx(async (client) => {
          await client.query(ORDERED_RANGES);
          return (await client.query(text, values)).rows;
        })
      : await pg.rows(text, values);
  return readsEventWindows(filter) ? eventPage(rows, filter.limit) : toPage(rows, filter.limit);
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
