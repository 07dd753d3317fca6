/**
 * Each endpoint's next due time on SQLite (endpoint-due.ts) is computed afresh by every migrate: a
 * file that an older version wrote to kept no entries, and a claim held up by a backlog would not
 * find the endpoints those writes made due.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, expect, it } from 'vitest';
import { claimWalk, claimWindow } from '../src/store/claim-window.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { storeEndpoint } from './helpers/endpoints.js';
import { claimPastShare } from './helpers/held-up-claim.js';

const dir = mkdtempSync(join(tmpdir(), 'linkhooks-endpoint-due-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const T0 = Date.UTC(2026, 10, 22, 12);

it('is computed afresh at each migrate from deliveries written without it', async () => {
  const filename = join(dir, 'older-writer.db');
  const store = createSqliteStore({ filename });
  await store.migrate();
  const endpointOf = (accountId: string, id: string) => storeEndpoint(store, accountId, id, T0);
  await endpointOf('acct_a', 'ep_a');
  await endpointOf('acct_b', 'ep_b');
  // Written as a version without the table writes them: A's backlog, more than a claim walks,
  // due before B's one.
  const backlog = claimWalk(claimWindow(8, 8)) + 20;
  const raw = new Database(filename);
  const insert = raw.prepare(`
    INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, attempts,
                            next_attempt_at, created_at, updated_at)
    VALUES (?, 'evt_1', ?, ?, 'click', 'pending', 0, ?, ?, ?)`);
  raw.transaction(() => {
    raw
      .prepare(
        `INSERT INTO events (id, account_id, name, body, created_at) VALUES ('evt_1', 'acct_a', 'click', '{}', ${T0})`,
      )
      .run();
    for (let i = 0; i < backlog; i++) insert.run(`dlv_a_${i}`, 'ep_a', 'acct_a', T0 + i, T0, T0);
    insert.run('dlv_b', 'ep_b', 'acct_b', T0 + backlog, T0, T0);
  })();
  raw.close();
  // A's account at the claimer's share: the claim reads past its walk, from the endpoints' entries.
  const claimPast = async () =>
    (await claimPastShare(store, T0 + backlog + 1, 'acct_a')).map((c) => c.delivery.id);
  expect(await claimPast()).toEqual([]);
  await store.migrate();
  expect(await claimPast()).toEqual(['dlv_b']);
  await store.close();
});
