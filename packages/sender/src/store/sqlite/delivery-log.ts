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
import { type Row, toAttempt, toDelivery, toEvent, toPage } from '../rows.js';
import { countParam, type SqliteDb } from './database.js';
import type { OffLoopReads } from './off-loop-reads.js';

export const SELECT_DELIVERY = `SELECT * FROM deliveries WHERE id = ? AND account_id = ?`;
const SELECT_ATTEMPTS = latestAttemptsSql('?');
const SELECT_EVENT = `SELECT * FROM events WHERE id = ? AND account_id = ?`;
/**
 * The account's events a search names (design D47): by our id, the platform's id, a click or a
 * conversion id, each through an index of its own; with `each`, at most that many of the click's
 * and of the conversion's (the ids are unique), as the count before a search reads them.
 */
const searchedEventsSql = (each?: number) => {
  const most = each === undefined ? '' : ` LIMIT ${each}`;
  return `
SELECT id FROM events WHERE id = @search AND account_id = @accountId
UNION SELECT id FROM events WHERE account_id = @accountId AND idempotency_key = @search
UNION SELECT * FROM (SELECT id FROM events INDEXED BY events_by_click
  WHERE account_id = @accountId AND click_id = @search${most})
UNION SELECT * FROM (SELECT id FROM events INDEXED BY events_by_conversion
  WHERE account_id = @accountId AND conversion_id = @search${most})`;
};
const SEARCHED_EVENTS = searchedEventsSql();
/**
 * What a search may read and still run on the event loop: the events a click or conversion id names
 * (a customer's conversions may all carry one), and their deliveries (an event has one for each
 * endpoint subscribed, up to an account's hundred). Past either, it runs on the reading thread.
 */
export const SEARCHED_ON_LOOP = { events: 100, deliveries: 1_000 };
/**
 * How many events a search names and how many deliveries they have, each counted up to a little
 * past its SEARCHED_ON_LOOP: a few thousand index entries at most, however many carry the id.
 */
const SEARCHED_AT_LEAST = `
WITH named(id) AS (${searchedEventsSql(SEARCHED_ON_LOOP.events + 1)})
SELECT (SELECT count(*) FROM named) AS events,
  (SELECT count(*) FROM (SELECT 1 FROM deliveries INDEXED BY deliveries_by_event
    WHERE event_id IN (SELECT id FROM named) LIMIT ${SEARCHED_ON_LOOP.deliveries + 1})) AS deliveries`;
/**
 * A page of the log, newest first. Only the filters given are in the statement (each a fixed
 * fragment, values bound), and each range names the index that fits: the searched events'
 * deliveries, else by endpoint, else by account, both keyed by status then id, so a page costs the
 * same at the top of a million rows as deep inside them, whichever status it asks for
 * (newestFirstSql), and a page filtered by event reads a bounded window of each range
 * (eventFilteredSql). A search reads the deliveries of the events it names, its status and event
 * checked on each (listDeliveries says where it runs).
 */
export function listSql(filter: DeliveryFilter): string {
  const where = ['account_id = @accountId'];
  if (filter.endpointId !== undefined) where.push(endpointOfAccountSql('@endpointId', '@accountId'));
  if (filter.cursor !== undefined) where.push('id < @cursor');
  if (filter.search !== undefined) {
    if (filter.status !== undefined) where.push('status = @status');
    if (filter.event !== undefined) where.push('event_name = @event');
    where.push(`event_id IN (${SEARCHED_EVENTS})`);
    return `SELECT * FROM deliveries INDEXED BY deliveries_by_event WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ${countParam('limit')}`;
  }
  const index = filter.endpointId !== undefined ? 'deliveries_by_endpoint' : 'deliveries_by_account';
  const rangeOf = (status: string, limit: string) =>
    `SELECT * FROM deliveries INDEXED BY ${index} WHERE ${[...where, `status = ${status}`].join(' AND ')} ORDER BY id DESC LIMIT ${limit}`;
  const status = filter.status !== undefined ? '@status' : null;
  return readsEventWindows(filter)
    ? eventFilteredSql(rangeOf, status, '@event', countParam('limit'))
    : newestFirstSql(rangeOf, status, countParam('limit'));
}

/** Whether a search of `search` reads more than SEARCHED_ON_LOOP. */
function searchesMuch(db: SqliteDb, accountId: string, search: string): boolean {
  const at = db.st(SEARCHED_AT_LEAST).get({ accountId, search }) as { events: number; deliveries: number };
  return at.events > SEARCHED_ON_LOOP.events || at.deliveries > SEARCHED_ON_LOOP.deliveries;
}

/**
 * A page of the log. A search reads every delivery of the events its id names, however many carry
 * it: past SEARCHED_ON_LOOP, off the event loop (`reads`, design D47 and D80). Any other page reads
 * a page's worth.
 */
export async function listDeliveries(
  db: SqliteDb,
  reads: OffLoopReads,
  accountId: string,
  filter: DeliveryFilter,
): Promise<Page<DeliveryRecord>> {
  const sql = listSql(filter);
  const params = {
    accountId,
    ...(filter.endpointId !== undefined ? { endpointId: filter.endpointId } : {}),
    ...(filter.status !== undefined ? { status: filter.status } : {}),
    ...(filter.event !== undefined ? { event: filter.event } : {}),
    ...(filter.search !== undefined ? { search: filter.search } : {}),
    ...(filter.cursor !== undefined ? { cursor: filter.cursor } : {}),
    limit: filter.limit + 1,
  };
  const offLoop = filter.search !== undefined && searchesMuch(db, accountId, filter.search);
  const rows = (
    offLoop ? (await reads.snapshot([{ sql, params, all: true }]))[0] : db.st(sql).all(params)
  ) as Row[];
  return readsEventWindows(filter) ? eventPage(rows, filter.limit) : toPage(rows, filter.limit);
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
