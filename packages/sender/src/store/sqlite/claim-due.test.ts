import { describe, expect, it } from 'vitest';
import type { Row } from '../rows.js';
import { duePages, readClaimed, SELECT_DUE } from './claim-due.js';
import { openSqlite, type SqliteDb } from './database.js';
import { migrateSqlite } from './migrate.js';

const NOW = 1_700_000_000_000;
/** SELECT_DUE's parameters but the page's: nothing full, a walk longer than any window here. */
const PARAMS = {
  now: NOW,
  full: '[]',
  fullAccounts: '[]',
  fullOrigins: '[]',
  fullAtOrigins: '[]',
  walk: 512,
};

/**
 * A migrated in-memory store with `n` deliveries due to one endpoint, a millisecond apart, whose
 * SELECT_DUE reads are recorded (each page's size and offset) as the real statement answers them.
 */
function dueRows(n: number) {
  const db = openSqlite(':memory:');
  migrateSqlite(db)();
  db.exec(`INSERT INTO endpoints (id, account_id, url, events, secret, created_at, updated_at)
           VALUES ('ep_1', 'acct_1', 'https://hooks.example.com/in', '["click"]', 'whsec_x', 0, 0)`);
  db.exec(
    `INSERT INTO events (id, account_id, name, body, created_at) VALUES ('evt_1', 'acct_1', 'click', x'7b7d', 0)`,
  );
  const insert = db.st(`
    INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, next_attempt_at, created_at, updated_at)
    VALUES (?, 'evt_1', 'ep_1', 'acct_1', 'click', 'pending', ?, 0, 0)`);
  for (let i = 0; i < n; i++) insert.run(idOf(i), NOW - n + i);
  const reads: [number, number][] = [];
  const watched: SqliteDb = {
    ...db,
    st(sql) {
      const statement = db.st(sql);
      if (sql !== SELECT_DUE) return statement;
      return {
        run: (...params) => statement.run(...params),
        get: (...params) => statement.get(...params),
        pluck: (toggle) => statement.pluck(toggle),
        all(params: { window: number; skip: number }) {
          reads.push([params.window, params.skip]);
          return statement.all(params);
        },
      };
    },
  };
  return { db: watched, reads, close: () => db.close() };
}

const idOf = (i: number) => `dlv_${String(i).padStart(4, '0')}`;
const ids = (to: number) => Array.from({ length: to }, (_, i) => idOf(i));

/** The first `k` rows the pages give, as picking takes them: one at a time, then it stops. */
function take(pages: Generator<Row>, k: number): string[] {
  const taken: string[] = [];
  for (const row of pages) {
    taken.push(row.id as string);
    if (taken.length === k) break;
  }
  return taken;
}

// With a limit of 8 and a window of 64: [due rows, rows picking takes, rows given, rows read,
// reads as [size, offset]].
const CASES: [string, number, number, number, number, [number, number][]][] = [
  ['reads one page of the claim’s limit when picking takes no more', 500, 8, 8, 8, [[8, 0]]],
  [
    'reads the next page past the rows already read, only once picking wants one more',
    500,
    9,
    9,
    16,
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
    10,
    [
      [8, 0],
      [8, 8],
    ],
  ],
];

describe('the SQLite claim’s pages of due rows', () => {
  it.each(CASES)('%s', async (_, due, taken, given, readRows, pages) => {
    const { db, reads, close } = dueRows(due);
    try {
      const read = { n: 0 };
      expect(take(duePages(db, PARAMS, 8, 64, read), taken)).toEqual(ids(given));
      expect(reads).toEqual(pages);
      expect(read.n).toBe(readRows);
    } finally {
      await close();
    }
  });
});

describe('the SQLite claim’s bodies', () => {
  it('reads a body stored as text, as SQL written by hand stores it, as its UTF-8 bytes', () => {
    const { db, close } = dueRows(1);
    try {
      db.exec(`INSERT INTO events (id, account_id, name, body, created_at)
               VALUES ('evt_text', 'acct_1', 'click', '{"city":"Zürich"}', 0)`);
      db.exec(`UPDATE deliveries SET event_id = 'evt_text' WHERE id = '${idOf(0)}'`);
      const [claimed] = readClaimed(db, NOW, JSON.stringify([idOf(0)]), ['token', NOW + 1]);
      expect(Buffer.from(claimed!.body)).toEqual(Buffer.from('{"city":"Zürich"}', 'utf8'));
    } finally {
      close();
    }
  });

  it('reads a body stored as bytes as those bytes, whatever they are', () => {
    const { db, close } = dueRows(1);
    try {
      const bytes = Buffer.from([0x7b, 0x00, 0xff, 0xfe, 0x7d]);
      db.st(
        `INSERT INTO events (id, account_id, name, body, created_at) VALUES ('evt_bin', 'acct_1', 'click', ?, 0)`,
      ).run(bytes);
      db.exec(`UPDATE deliveries SET event_id = 'evt_bin' WHERE id = '${idOf(0)}'`);
      const [claimed] = readClaimed(db, NOW, JSON.stringify([idOf(0)]), ['token', NOW + 1]);
      expect(Buffer.from(claimed!.body)).toEqual(bytes);
    } finally {
      close();
    }
  });
});
