import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { openSqlite, PAGE_CACHE_KIB } from './database.js';

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
