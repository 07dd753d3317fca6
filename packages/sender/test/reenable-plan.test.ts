/**
 * Re-enabling on SQLite (design D3) walks the endpoint's held and skipped deliveries through their
 * partial indexes, never its whole log: the plans say so, and a replay over a long log of
 * delivered rows still finds the few skipped ones.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { HOLD_SKIPPED, REPLAY_SKIPPED, RESUME_HELD } from '../src/store/sqlite/reenable-endpoint.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';

const dir = mkdtempSync(join(tmpdir(), 'linkhooks-reenable-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('sqlite re-enable plans', () => {
  it('reads only the partial index of the rows each statement moves', async () => {
    const filename = join(dir, 'plan.db');
    const store = createSqliteStore({ filename });
    await store.migrate();
    await store.close();
    const db = new Database(filename, { readonly: true });
    try {
      const plan = (sql: string) =>
        (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all({ id: 'ep', now: 1 }) as { detail: string }[])
          .map((r) => r.detail)
          .join('\n');
      expect(plan(RESUME_HELD)).toMatch(
        /^SEARCH deliveries USING INDEX deliveries_queued_by_endpoint \(endpoint_id=\? AND status=\?\)$/,
      );
      for (const sql of [REPLAY_SKIPPED, HOLD_SKIPPED]) {
        expect(plan(sql)).toMatch(/^SEARCH deliveries USING INDEX deliveries_skipped \(endpoint_id=\?\)$/);
      }
    } finally {
      db.close();
    }
  });
});
