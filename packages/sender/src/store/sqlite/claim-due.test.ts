import { describe, expect, it } from 'vitest';
import type { Row } from '../rows.js';
import { duePages, SELECT_DUE } from './claim-due.js';
import type { SqliteDb } from './database.js';

/**
 * A connection whose SELECT_DUE answers `n` due rows as `LIMIT @window OFFSET @skip` does, each read
 * recorded with the parameters it was given.
 */
function dueRows(n: number) {
  const due = Array.from({ length: n }, (_, i) => ({ id: `dlv_${i}` }));
  const reads: { window: number; skip: number; now: number }[] = [];
  const db = {
    st(sql: string) {
      expect(sql).toBe(SELECT_DUE);
      return {
        all({ window, skip, now }: { window: number; skip: number; now: number }) {
          reads.push({ window, skip, now });
          return due.slice(skip, skip + window);
        },
      };
    },
  } as unknown as SqliteDb;
  return { db, reads };
}

/** The first `k` rows the pages give, as picking takes them: one at a time, then it stops. */
function take(pages: Generator<Row>, k: number): string[] {
  const ids: string[] = [];
  for (const row of pages) {
    ids.push(row.id as string);
    if (ids.length === k) break;
  }
  return ids;
}

const ids = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `dlv_${from + i}`);

// With a limit of 8 and a window of 64: [due rows, rows picking takes, rows given, reads as [size, skip]].
const CASES: [string, number, number, number, [number, number][]][] = [
  ['reads one page of the claim’s limit when picking takes no more', 500, 8, 8, [[8, 0]]],
  [
    'reads the next page past the rows already read, only once picking wants one more',
    500,
    9,
    9,
    [
      [8, 0],
      [8, 8],
    ],
  ],
  [
    'ends at the window: the third page holds the rest of it',
    500,
    500,
    64,
    [
      [8, 0],
      [8, 8],
      [48, 16],
    ],
  ],
  [
    'stops after a page that came up short: nothing more is due',
    10,
    500,
    10,
    [
      [8, 0],
      [8, 8],
    ],
  ],
];

describe('the SQLite claim’s pages of due rows', () => {
  it.each(CASES)('%s', (_, due, taken, given, pages) => {
    const { db, reads } = dueRows(due);
    const read = { n: 0 };
    expect(take(duePages(db, { now: 7 }, 8, 64, read), taken)).toEqual(ids(0, given));
    expect(reads).toEqual(pages.map(([window, skip]) => ({ window, skip, now: 7 })));
    expect(read.n).toBe(reads.reduce((n, r) => n + Math.min(r.window, Math.max(0, due - r.skip)), 0));
  });
});
