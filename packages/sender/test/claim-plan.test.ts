/**
 * The SQLite claim's two reads on a migrated database: the walk follows the due-time index and
 * reads neither the events nor their bodies; what an attempt needs is read for the picked ids by
 * primary key. Neither scans a table, however long the log.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SELECT_DUE, SELECT_PICKED } from '../src/store/sqlite/claim-due.js';
import { withSqlitePlans } from './helpers/sqlite-plans.js';

const dir = mkdtempSync(join(tmpdir(), 'linkhooks-claim-plan-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the SQLite claim', () => {
  it('walks the due index without the events, then reads the picked rows by key', async () => {
    await withSqlitePlans(dir, (plan) => {
      const walk = plan(SELECT_DUE, {
        now: 0,
        full: '[]',
        fullAccounts: '[]',
        fullOrigins: '[]',
        window: 64,
      });
      expect(walk).toMatch(/SEARCH d USING INDEX deliveries_due \(next_attempt_at<\?\)/);
      expect(walk).not.toMatch(/\bev\b|events/);
      const picked = plan(SELECT_PICKED, { now: 0, ids: '["dlv_1"]' });
      expect(picked).toMatch(/SEARCH d USING INDEX sqlite_autoindex_deliveries_1 \(id=\?\)/);
      expect(picked).toMatch(/SEARCH ev USING INDEX sqlite_autoindex_events_1 \(id=\?\)/);
      expect(picked).not.toMatch(/SCAN (d|e|ev)\b/);
    });
  });
});
