/**
 * The steps that move an endpoint's deliveries on SQLite (design D34, D3) walk its queued or
 * skipped deliveries through their partial indexes, never its whole log: the plans say so. (What
 * they move is tested with the store battery and queue-settling.test.ts.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MOVES } from '../src/store/sqlite/settle-queue.js';
import { withSqlitePlans } from './helpers/sqlite-plans.js';

const dir = mkdtempSync(join(tmpdir(), 'linkhooks-moves-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('sqlite queue move plans', () => {
  it('reads only the partial index of the rows each move takes, and those rows by rowid', async () => {
    await withSqlitePlans(dir, (plan) => {
      const params = { id: 'ep', now: 1, limit: 100, releaseAt: null };
      const index = {
        hold: /SEARCH deliveries USING (COVERING )?INDEX deliveries_queued_by_endpoint \(endpoint_id=\? AND status=\?\)/,
        release:
          /SEARCH deliveries USING (COVERING )?INDEX deliveries_queued_by_endpoint \(endpoint_id=\? AND status=\?\)/,
        'hold-skipped': /SEARCH deliveries USING (COVERING )?INDEX deliveries_skipped \(endpoint_id=\?\)/,
        replay: /SEARCH deliveries USING (COVERING )?INDEX deliveries_skipped \(endpoint_id=\?\)/,
      };
      for (const [move, sql] of Object.entries(MOVES)) {
        const shown = plan(sql, params);
        expect(shown, move).toMatch(index[move as keyof typeof index]);
        expect(shown, move).toMatch(/SEARCH deliveries USING INTEGER PRIMARY KEY \(rowid=\?\)/);
        expect(shown, move).not.toMatch(/SCAN deliveries/);
      }
    });
  });
});
