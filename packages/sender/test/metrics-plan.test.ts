/**
 * What a metrics scrape reads on SQLite: the queued deliveries' counts come from the partial index
 * of queued deliveries, never a scan of the log (PostgreSQL's plan is held to the same in
 * postgres-store.test.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COUNT_QUEUED } from '../src/store/sqlite/stats.js';
import { withSqlitePlans } from './helpers/sqlite-plans.js';

const dir = mkdtempSync(join(tmpdir(), 'linkhooks-metrics-plan-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('sqlite metrics plan', () => {
  it('counts queued deliveries in one pass over the index of queued deliveries', async () => {
    await withSqlitePlans(dir, (plan) => {
      // One pass over the index, nothing sorted.
      expect(plan(COUNT_QUEUED, {})).toMatch(
        /^SCAN deliveries USING COVERING INDEX deliveries_queued_by_endpoint$/,
      );
    });
  });
});
