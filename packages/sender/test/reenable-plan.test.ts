/**
 * Re-enabling on SQLite (design D3) walks the endpoint's held and skipped deliveries through their
 * partial indexes, never its whole log: the plans say so. (What re-enabling moves is tested with
 * the store battery.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HOLD_SKIPPED, REPLAY_SKIPPED, RESUME_HELD_NOW } from '../src/store/sqlite/reenable-endpoint.js';
import { withSqlitePlans } from './helpers/sqlite-plans.js';

const dir = mkdtempSync(join(tmpdir(), 'linkhooks-reenable-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('sqlite re-enable plans', () => {
  it('reads only the partial index of the rows each statement moves', async () => {
    await withSqlitePlans(dir, (plan) => {
      const params = { id: 'ep', now: 1 };
      expect(plan(RESUME_HELD_NOW, params)).toMatch(
        /^SEARCH deliveries USING INDEX deliveries_queued_by_endpoint \(endpoint_id=\? AND status=\?\)$/,
      );
      for (const sql of [REPLAY_SKIPPED, HOLD_SKIPPED]) {
        expect(plan(sql, params)).toMatch(
          /^SEARCH deliveries USING INDEX deliveries_skipped \(endpoint_id=\?\)$/,
        );
      }
    });
  });
});
