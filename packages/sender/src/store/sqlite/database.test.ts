import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { countParam, openSqlite, PAGE_CACHE_KIB } from './database.js';
import { listSql } from './delivery-log.js';

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

it('takes each LIMIT and OFFSET the store binds as an expression, which SQLite does not plan with', async () => {
  // A parameter, parenthesised or not, as a LIMIT, an OFFSET or the second number of `LIMIT a, b`,
  // not followed by the `+ 0` of countParam.
  const param = String.raw`\(*\s*(?:[@:$]\w+|\?)(?!\w)(?!\s*\+)`;
  const bareRule = new RegExp(
    String.raw`\b(?:LIMIT|OFFSET)\s+${param}|\bLIMIT\s+[^,\n\x60]+,\s*${param}`,
    'g',
  );
  const bareIn = (text: string) => [...text.matchAll(bareRule)].map((m) => m[0]);
  expect(
    ['LIMIT (@n)', 'LIMIT 5, @n', 'OFFSET ?', `LIMIT ${countParam('n')}`].map((t) => bareIn(t).length),
  ).toEqual([1, 1, 1, 0]);
  const folder = new URL('.', import.meta.url);
  const sources = readdirSync(folder).filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'));
  expect(sources).toContain('claim-due.ts');
  const bare = sources.flatMap((file) =>
    bareIn(readFileSync(new URL(file, folder), 'utf8')).map((found) => `${file}: ${found}`),
  );
  // The log's pages are built from a placeholder each store gives (log-page-sql.ts).
  for (const filter of [
    {},
    { status: 'failed' },
    { event: 'click' },
    { endpointId: 'ep', search: 'c' },
  ] as const) {
    bare.push(...bareIn(listSql({ limit: 50, ...filter })).map((found) => `listSql: ${found}`));
  }
  expect(bare).toEqual([]);
  // And it reads the value given, as a bare parameter would.
  const db = openSqlite(':memory:');
  try {
    db.exec('CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2), (3), (4)');
    const sql = `SELECT x FROM t ORDER BY x LIMIT ${countParam('n')} OFFSET ${countParam('skip')}`;
    expect(db.st(sql).pluck().all({ n: 2, skip: 1 })).toEqual([2, 3]);
    expect(db.st(sql).pluck().all({ n: 3, skip: 0 })).toEqual([1, 2, 3]);
  } finally {
    await db.close();
  }
});
