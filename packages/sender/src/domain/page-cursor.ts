/**
 * A page's cursor: the `next_cursor` of the page before, the id of its last item. Anything else is
 * refused: compared as an id, a cursor that is not one read from the first page again, or read
 * nothing, and a client looping over pages never learned its cursor was broken.
 */

/** The kinds of pages read by cursor, by the prefix of their items' ids. */
export type CursorPrefix = 'dlv' | 'acct';

const CURSORS: Readonly<Record<CursorPrefix, RegExp>> = {
  dlv: /^dlv_[0-9A-Za-z]{1,96}$/,
  acct: /^acct_[0-9A-Za-z]{1,96}$/,
};

/** Whether `value` can be a cursor of pages of `prefix` ids. */
export const isPageCursor = (prefix: CursorPrefix, value: string): boolean => CURSORS[prefix].test(value);

/** What a refused cursor is told. */
export const pageCursorProblem = (prefix: CursorPrefix): string =>
  `cursor must be the next_cursor of a page before, as it came (${prefix}_…)`;
