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
import { newId } from '../src/domain/ids.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { storeEndpoint } from './helpers/endpoints.js';
import { claimPastShare, HELD_UP_BACKLOG } from './helpers/held-up-claim.js';

const dir = mkdtempSync(join(tmpdir(), 'linkhooks-endpoint-due-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const T0 = Date.UTC(2026, 10, 22, 12);

it('is computed afresh at each migrate where a release that kept no entries wrote deliveries', async () => {
  const filename = join(dir, 'older-writer.db');
  const store = createSqliteStore({ filename });
  await store.migrate();
  await storeEndpoint(store, 'acct_a', 'ep_a', T0);
  await storeEndpoint(store, 'acct_b', 'ep_b', T0);
  const click = (accountId: string, i: number) =>
    store.publish(
      { id: newId('evt', T0 + i), accountId, name: 'click', body: new Uint8Array(2), createdAt: T0 + i },
      () => newId('dlv', T0 + i),
    );
  for (let i = 0; i < HELD_UP_BACKLOG; i++) await click('acct_a', i);
  await click('acct_b', HELD_UP_BACKLOG);
  // As an older release leaves the file: B's delivery, and no entry for it.
  const raw = new Database(filename);
  raw.prepare(`DELETE FROM endpoint_due WHERE endpoint_id = 'ep_b'`).run();
  raw.close();
  // A's account at the claimer's share: the claim reads past its walk, from the endpoints' entries.
  const claimPast = async (now: number) =>
    (await claimPastShare(store, now, 'acct_a')).map((c) => c.delivery.endpointId);
  expect(await claimPast(T0 + HELD_UP_BACKLOG + 1)).toEqual([]);
  await store.migrate();
  expect(await claimPast(T0 + HELD_UP_BACKLOG + 2)).toEqual(['ep_b']);
  await store.close();
});
