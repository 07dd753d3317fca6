import { describe, expect, it } from 'vitest';
import { openSqlite, type SqliteDb } from './database.js';
import { createWriteQueue, FLUSH_BUDGET_MS } from './write-queue.js';

/**
 * An in-memory database with one table, whose commits are counted (the queue's afterCommit).
 * `clock`: the budget's; a stopped one (the default) never runs out, so a turn's writes share one
 * transaction however slow the machine is.
 */
function setUp(held: () => Promise<void> | null = () => null, clock: () => number = () => 0) {
  const opened = openSqlite(':memory:');
  opened.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  const db: SqliteDb = { ...opened, held };
  let commits = 0;
  const write = createWriteQueue(db, () => ++commits, clock);
  const insert = (v: string | null) => () => db.st('INSERT INTO t (v) VALUES (?) RETURNING id').get(v);
  const values = () => db.st('SELECT v FROM t ORDER BY id').pluck().all();
  return { db, write, insert, values, commits: () => commits };
}

describe('the SQLite delivery path’s write queue (design D58)', () => {
  it('writes what is queued in one turn in one transaction, in order', async () => {
    const { write, insert, values, commits } = setUp();
    const written = await Promise.all([write(insert('a')), write(insert('b')), write(insert('c'))]);
    expect(written.map((w) => w.commit)).toEqual([1, 1, 1]);
    expect(commits()).toBe(1);
    expect(values()).toEqual(['a', 'b', 'c']);
  });

  it('fails a write that throws alone: the ones before and after it are written', async () => {
    const { write, insert, values } = setUp();
    const results = await Promise.allSettled([
      write(insert('a')),
      write(insert(null)), // NOT NULL
      write(insert('c')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: 'SQLITE_CONSTRAINT_NOTNULL' });
    expect(values()).toEqual(['a', 'c']);
  });

  it('holds the event loop one budget per transaction: the rest goes into the next, after a turn', async () => {
    const { write, insert, values } = setUp(undefined, () => performance.now());
    let turns = 0;
    const counting = setInterval(() => turns++, 1);
    const slow = () => {
      const until = performance.now() + FLUSH_BUDGET_MS + 1;
      while (performance.now() < until);
      return turns;
    };
    try {
      const [first, second] = await Promise.all([
        write(slow),
        write(() => {
          insert('after')();
          return turns;
        }),
      ]);
      expect([first.commit, second.commit]).toEqual([1, 2]);
      // The interval's timer ran between the two transactions: the loop was let go in between.
      expect(second.value).toBeGreaterThan(first.value);
      expect(values()).toEqual(['after']);
    } finally {
      clearInterval(counting);
    }
  });

  it('writes nothing while the checkpoints’ thread catches up, and everything queued once it has', async () => {
    let release: () => void = () => undefined;
    let hold: Promise<void> | null = new Promise<void>((resolve) => {
      release = () => {
        hold = null;
        resolve();
      };
    });
    let asked: () => void = () => undefined;
    const heldAsked = new Promise<void>((resolve) => {
      asked = resolve;
    });
    const { write, insert, values, commits } = setUp(() => {
      asked();
      return hold;
    });
    const written = Promise.all([write(insert('a')), write(insert('b'))]);
    // The queue has come to write and found the hold: it waits for it instead.
    await heldAsked;
    expect(values()).toEqual([]);
    expect(commits()).toBe(0);
    release();
    expect((await written).map((w) => w.commit)).toEqual([1, 1]);
    expect(values()).toEqual(['a', 'b']);
  });
});
