/**
 * A page of the delivery log, newest first, over indexes keyed (account or endpoint, status, id):
 * a status filter is one range of the index, and the whole log is one range per status, merged. A
 * page reads at most a page from each range, however many deliveries of other statuses lie between
 * (a million delivered beside three failed), in SQLite and PostgreSQL alike. No index orders a
 * range by event name: a page filtered by event reads at most EVENT_SCAN deliveries of each range,
 * and may hold fewer than its limit, even none, with a cursor to read on from (eventPage).
 */

import { ATTEMPTS_KEPT } from '../domain/attempts-kept.js';
import { DELIVERY_STATUSES } from '../domain/delivery-state.js';
import type { DeliveryFilter, Page } from './port.js';
import type { DeliveryRecord } from './records.js';
import { type Row, toDelivery, toPage } from './rows.js';
import { KEPT_ENDPOINT_SQL, sqlString } from './sql-rules.js';

/**
 * The attempts one delivery's detail shows: all it keeps, its latest (its `attempts` counts them
 * all). The limit also bounds a delivery that gathered more before they were kept to a number.
 */
export const ATTEMPTS_SHOWN = ATTEMPTS_KEPT;

/** The delivery `id`'s latest ATTEMPTS_SHOWN attempts, in order, given `id` as SQL (a placeholder). */
export const latestAttemptsSql = (id: string) =>
  `SELECT * FROM (SELECT * FROM attempts WHERE delivery_id = ${id} ORDER BY number DESC LIMIT ${ATTEMPTS_SHOWN}) AS latest ORDER BY number`;

/** The deliveries of each status range a page filtered by event reads, at most, from its cursor. */
export const EVENT_SCAN = 1_000;

/**
 * `rangeOf(status, limit)`: the SELECT of one status's range, newest first, given the status as SQL
 * (a quoted constant, or a bound parameter's placeholder) and how many rows it reads. With `status`
 * the page is that one range; without, the ranges of every status merged, the page's `limit` (a
 * placeholder) taken from them.
 */
export function newestFirstSql(
  rangeOf: (status: string, limit: string) => string,
  status: string | null,
  limit: string,
) {
  if (status !== null) return rangeOf(status, limit);
  const ranges = DELIVERY_STATUSES.map((s, i) => `SELECT * FROM (${rangeOf(sqlString(s), limit)}) AS s${i}`);
  return `${ranges.join('\nUNION ALL ')}\nORDER BY id DESC LIMIT ${limit}`;
}

/**
 * An endpoint's range, only if the endpoint is the account's: another account's endpoint would
 * otherwise be walked whole, its every delivery dropped by the account condition. A scalar
 * subquery, uncorrelated: run once, before the range is read. (As `EXISTS`, SQLite made it a join
 * led by the endpoint, and then sorted the range instead of walking it in the index's order.)
 * `endpoint` and `account` are placeholders.
 */
export const endpointOfAccountSql = (endpoint: string, account: string) =>
  `endpoint_id = ${endpoint} AND (SELECT account_id FROM endpoints WHERE id = ${endpoint} AND ${KEPT_ENDPOINT_SQL}) = ${account}`;

/** Whether a page is read through event windows (eventFilteredSql, eventPage): a search reads by event. */
export const readsEventWindows = (filter: DeliveryFilter) =>
  filter.event !== undefined && filter.search === undefined;

/**
 * A page filtered by event name: each range's first EVENT_SCAN rows (a window), and of each window
 * its `limit` newest of the event, with how many rows it read (`scanned`) and the last id it read
 * (`edge`): a window's row whether or not any matched. `event` and `limit` are placeholders.
 */
export function eventFilteredSql(
  rangeOf: (status: string, limit: string) => string,
  status: string | null,
  event: string,
  limit: string,
) {
  const statuses = status !== null ? [status] : DELIVERY_STATUSES.map(sqlString);
  const windows = statuses.map((s, i) => `w${i} AS MATERIALIZED (${rangeOf(s, String(EVENT_SCAN))})`);
  const pages = statuses.map(
    (_, i) =>
      `SELECT m.*, e.scanned, e.edge FROM (SELECT count(*) AS scanned, min(id) AS edge FROM w${i}) AS e ` +
      `LEFT JOIN (SELECT * FROM w${i} WHERE event_name = ${event} ORDER BY id DESC LIMIT ${limit}) AS m ON 1 = 1`,
  );
  return `WITH ${windows.join(',\n')}\n${pages.join('\nUNION ALL ')}`;
}

/**
 * The page eventFilteredSql's rows make. Below the highest edge of a window that read EVENT_SCAN
 * rows, its range is unread: the page holds the matches at or above it, and, if fewer than a page,
 * that edge as its cursor (the next page reads on below it). `limit` is the page's.
 */
export function eventPage(rows: Row[], limit: number): Page<DeliveryRecord> {
  let edge: string | null = null;
  for (const r of rows) {
    if (Number(r.scanned) === EVENT_SCAN && (edge === null || (r.edge as string) > edge))
      edge = r.edge as string;
  }
  const matches = rows
    .filter((r) => r.id != null && (edge === null || (r.id as string) >= edge))
    .sort((a, b) => ((a.id as string) < (b.id as string) ? 1 : -1));
  if (matches.length > limit) return toPage(matches, limit);
  return { items: matches.map(toDelivery), nextCursor: edge };
}
