import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { bareBounds, countParam, openSqlite, PAGE_CACHE_KIB } from './database.js';

const dir = mkdtempSync(join(tmpdir(), 'sqlite-database-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('keeps the store’s pages in a cache of its own size, not SQLite’s 2 MiB default', async () => {
  const db = openSqlite(join(dir, 'store.db'));
  try {
    // A negative cache_size is in KiB.
    expect(db.st('PRAGMA cache_size').pluck().get()).toBe(-PAGE_CACHE_KIB);
    expect(PAGE_CACHE_KIB).toBeGreaterThan(2048);
  } finally {
    await db.close();
  }
});

it('refuses to prepare a LIMIT or OFFSET bound as a bare parameter, which SQLite plans with', async () => {
  expect(
    [
      'LIMIT (@n)',
      'LIMIT 5, @n',
      'OFFSET ?',
      'LIMIT ?1',
      'LIMIT (@skip + 0), ( @n )',
      `LIMIT ${countParam('n')}`,
      `LIMIT ${countParam('skip')}, ${countParam('n')}`,
      'LIMIT 1) AND x IN (@a, @b)',
    ].map((t) => bareBounds(t)),
  ).toEqual([
    ['LIMIT (@n'],
    ['LIMIT 5, @n'],
    ['OFFSET ?'],
    ['LIMIT ?1'],
    ['LIMIT (@skip + 0), ( @n'],
    [],
    [],
    [],
  ]);
  // The store's statements written in its sources, run by a test or not.
  const folder = new URL('.', import.meta.url);
  const sources = readdirSync(folder).filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'));
  expect(sources).toContain('claim-due.ts');
  const bare = sources.flatMap((file) =>
    bareBounds(readFileSync(new URL(file, folder), 'utf8')).map((found) => `${file}: ${found}`),
  );
  expect(bare).toEqual([]);
  const db = openSqlite(':memory:');
  try {
    db.exec('CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2), (3), (4)');
    // Checked as each statement is prepared, the SQL built at run time (the log's pages) included.
    expect(() => db.st('SELECT x FROM t ORDER BY x LIMIT @n OFFSET @skip')).toThrow(
      expect.objectContaining({
        code: 'internal',
        message: expect.stringContaining('"LIMIT @n", "OFFSET @skip"'),
      }),
    );
    // Written with countParam, a bound reads the value given, as a bare parameter would.
    const sql = `SELECT x FROM t ORDER BY x LIMIT ${countParam('n')} OFFSET ${countParam('skip')}`;
    expect(db.st(sql).pluck().all({ n: 2, skip: 1 })).toEqual([2, 3]);
    expect(db.st(sql).pluck().all({ n: 3, skip: 0 })).toEqual([1, 2, 3]);
  } finally {
    await db.close();
  }
});
