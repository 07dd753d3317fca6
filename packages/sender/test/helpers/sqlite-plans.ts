/**
 * SQLite's query plans of a store's statements, on a freshly migrated database: what the plan tests
 * hold a statement to (its index, never a scan of the table). `stats` (sqlite_stat1's rows: table,
 * index, stat) stand for what ANALYZE would find in a large database, where the planner may choose
 * another order than on an empty one.
 *
 * @example
 * await withSqlitePlans(dir, (plan) => expect(plan(SQL, { id: 'ep' })).toMatch(/USING INDEX x/));
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.js';

/** The plan's lines (EXPLAIN QUERY PLAN's `detail`), one per line. */
export type Plan = (sql: string, params: Record<string, unknown>) => string;

export async function withSqlitePlans(
  dir: string,
  check: (plan: Plan) => void,
  stats: [table: string, index: string, stat: string][] = [],
): Promise<void> {
  const filename = join(dir, `plans-${Date.now()}-${Math.random().toString(36).slice(2)}.db`);
  const store = createSqliteStore({ filename });
  await store.migrate();
  await store.close();
  if (stats.length > 0) {
    const writable = new Database(filename);
    writable.exec('ANALYZE'); // makes sqlite_stat1
    const insert = writable.prepare('INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?, ?, ?)');
    writable.transaction(() => {
      writable.exec('DELETE FROM sqlite_stat1');
      for (const row of stats) insert.run(...row);
    })();
    writable.close();
  }
  const db = new Database(filename, { readonly: true });
  try {
    check((sql, params) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[])
        .map((r) => r.detail)
        .join('\n'),
    );
  } finally {
    db.close();
  }
}
