/**
 * Each endpoint's next due time on SQLite (endpoint-due.ts) is computed afresh by every migrate: a
 * file that an older version wrote to kept no entries, and a claim held up by a backlog would not
 * find the endpoints those writes made due. A transaction's attempts settle their endpoints'
 * entries once its writes are done.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, expect, it } from 'vitest';
import { newId } from '../src/domain/ids.js';
import type { ClaimedDelivery } from '../src/store/records.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { storeEndpoint } from './helpers/endpoints.js';
import { claimPastShare, HELD_UP_BACKLOG } from './helpers/held-up-claim.js';
import { recordAnswer } from './helpers/record-answer.js';

const dir = mkdtempSync(join(tmpdir(), 'linkhooks-endpoint-due-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const T0 = Date.UTC(2026, 10, 22, 12);

/** A store on a new file with ep_a (of acct_a) and ep_b (of acct_b), and `click`, which publishes the i-th click. */
async function storeOf(name: string) {
  const filename = join(dir, name);
  const store = createSqliteStore({ filename });
  await store.migrate();
  await storeEndpoint(store, 'acct_a', 'ep_a', T0);
  await storeEndpoint(store, 'acct_b', 'ep_b', T0);
  const click = (accountId: string, i: number) =>
    store.publish(
      { id: newId('evt', T0 + i), accountId, name: 'click', body: new Uint8Array(2), createdAt: T0 + i },
      () => newId('dlv', T0 + i),
    );
  return { filename, store, click };
}

it('is computed afresh at each migrate where a release that kept no entries wrote deliveries', async () => {
  const { filename, store, click } = await storeOf('older-writer.db');
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

it('settles the entries of a transaction’s attempts once its writes are done, to what is due after them', async () => {
  const { filename, store, click } = await storeOf('settled-in-one-transaction.db');
  for (let i = 0; i < 3; i++) await click('acct_a', i);
  await click('acct_b', 3);
  const raw = new Database(filename, { readonly: true });
  const entries = () =>
    Object.fromEntries(
      raw
        .prepare('SELECT endpoint_id, next_due_at FROM endpoint_due ORDER BY endpoint_id')
        .all()
        .map((r) => {
          const { endpoint_id, next_due_at } = r as { endpoint_id: string; next_due_at: number };
          return [endpoint_id, next_due_at];
        }),
    );
  const record = (c: ClaimedDelivery, ok: boolean, now: number) =>
    recordAnswer(store, c, ok ? 200 : 500, now);
  // Two of ep_a's three and ep_b's one, recorded together: one transaction, unless a slow turn
  // splits them; the entries are the same either way.
  const first = await store.claimDue({ now: T0 + 10, limit: 10, leaseMs: 45_000, perEndpointCap: 2 });
  const of = (endpointId: string) => first.filter((c) => c.delivery.endpointId === endpointId);
  expect([of('ep_a').length, of('ep_b').length]).toEqual([2, 1]);
  const [failed, delivered] = of('ep_a');
  const applied = await Promise.all([
    record(failed!, false, T0 + 20),
    record(delivered!, true, T0 + 20),
    record(of('ep_b')[0]!, true, T0 + 20),
  ]);
  expect(applied.map((a) => a.status)).toEqual(['awaiting_retry', 'delivered', 'delivered']);
  // ep_a's third is still due, so its entry stays; ep_b has nothing queued, so its entry is gone.
  expect(entries()).toEqual({ ep_a: T0 });
  const [third] = await store.claimDue({ now: T0 + 30, limit: 10, leaseMs: 45_000, perEndpointCap: 2 });
  await record(third!, true, T0 + 40);
  // Only the retry is left, due a minute on: the entry moves on to it.
  expect(entries()).toEqual({ ep_a: applied[0]!.nextAttemptAt });
  expect(applied[0]!.nextAttemptAt).toBeGreaterThan(T0 + 40);
  raw.close();
  await store.close();
});
