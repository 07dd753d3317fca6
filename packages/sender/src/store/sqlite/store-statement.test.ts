import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { storeStatement } from './store-statement.js';

let db: Database.Database;
beforeEach(() => {
  db = new Database(':memory:');
  db.exec(`
    CREATE TABLE t (id TEXT PRIMARY KEY, n INTEGER, x REAL, body BLOB, note TEXT);
    INSERT INTO t VALUES ('a', 1, 0.5, x'00ff', NULL), ('b', 2, NULL, NULL, 'two'), ('c', 3, 1.5, x'', 'three');
    CREATE TABLE u (id TEXT PRIMARY KEY, t_id TEXT);
    INSERT INTO u VALUES ('u1', 'a'), ('u2', 'c');`);
});
afterEach(() => db.close());

/** The same SQL through the driver's own rows and through storeStatement. */
const both = (sql: string) => ({ driver: db.prepare(sql), store: storeStatement(db.prepare(sql)) });

it('reads the rows the driver reads, key for key and in the same order', () => {
  for (const sql of [
    'SELECT * FROM t ORDER BY id',
    'SELECT id, n * 2 AS twice, body FROM t WHERE n > ? ORDER BY n DESC',
    // Two columns of one name: the later one's value, at the first one's place, as the driver has it.
    'SELECT t.*, u.id FROM t JOIN u ON u.t_id = t.id ORDER BY t.id',
  ]) {
    const { driver, store } = both(sql);
    const params = sql.includes('?') ? [1] : [];
    const rows = store.all(...params) as Record<string, unknown>[];
    expect(rows).toEqual(driver.all(...params));
    expect(rows.map((r) => Object.keys(r))).toEqual(
      (driver.all(...params) as Record<string, unknown>[]).map((r) => Object.keys(r)),
    );
    expect(store.get(...params)).toEqual(driver.get(...params));
  }
  expect(both('SELECT * FROM t WHERE id = ?').store.get('zz')).toBeUndefined();
});

it('plucks the first column, and reads whole rows again when told to stop', () => {
  const store = storeStatement(db.prepare('SELECT id, n FROM t ORDER BY id'));
  expect(store.pluck().all()).toEqual(['a', 'b', 'c']);
  expect(store.get()).toBe('a');
  expect(store.pluck(false).all()).toEqual([
    { id: 'a', n: 1 },
    { id: 'b', n: 2 },
    { id: 'c', n: 3 },
  ]);
});

it('reads a column a migration adds to a table it reads with `*`', () => {
  const store = storeStatement(db.prepare('SELECT * FROM u ORDER BY id'));
  expect(store.get()).toEqual({ id: 'u1', t_id: 'a' });
  db.exec("ALTER TABLE u ADD COLUMN label TEXT DEFAULT 'none'");
  expect(store.all()).toEqual([
    { id: 'u1', t_id: 'a', label: 'none' },
    { id: 'u2', t_id: 'c', label: 'none' },
  ]);
});

it('runs statements that return no rows, and writes that return some', () => {
  const insert = storeStatement(db.prepare("INSERT INTO u VALUES ('u3', 'b')"));
  expect(insert.run().changes).toBe(1);
  const update = storeStatement(db.prepare('UPDATE t SET n = n + 10 WHERE id = ? RETURNING id, n'));
  expect(update.get('b')).toEqual({ id: 'b', n: 12 });
});
