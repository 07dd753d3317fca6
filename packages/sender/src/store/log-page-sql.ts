/**
 * A page of the delivery log, newest first, over indexes keyed (account or endpoint, status, id):
 * a status filter is one range of the index, and the whole log is one range per status, merged. A
 * page reads at most a page from each range, however many deliveries of other statuses lie between
 * (a million delivered beside three failed), in SQLite and PostgreSQL alike.
 */
import { DELIVERY_STATUSES } from '../domain/delivery-state.js';

/**
 * `rangeOf(status)`: the SELECT of one status's range, newest first and limited to a page, given
 * the status as SQL (a quoted constant, or a bound parameter's placeholder). With `status` the page
 * is that one range; without, the ranges of every status merged, the page's `limit` (a
 * placeholder) taken from them.
 */
export function newestFirstSql(rangeOf: (status: string) => string, status: string | null, limit: string) {
  if (status !== null) return rangeOf(status);
  const ranges = DELIVERY_STATUSES.map((s, i) => `SELECT * FROM (${rangeOf(`'${s}'`)}) AS s${i}`);
  return `${ranges.join('\nUNION ALL ')}\nORDER BY id DESC LIMIT ${limit}`;
}
