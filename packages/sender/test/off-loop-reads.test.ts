/**
 * On SQLite, the reads that cost what the store holds (the counts behind a `/metrics` scrape, a
 * recovery's count of what is left, an endpoint's statistics over a window, a search of the log by
 * an id many events carry) run on a thread of their own: the event loop goes on turning while they
 * read, and they see what was committed before them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { storeEndpoint } from './helpers/endpoints.js';

const T0 = Date.UTC(2026, 11, 7, 12);
const QUEUED = 40_000;
const FAILED = 3_000;

/**
 * Whether `promise` settles with no turn of the event loop (its microtasks only), and its value. A
 * read on the loop does; one on the thread cannot, as its answer comes as a message, which the loop
 * takes only at its next turn. (Counting turns until the answer instead depends on how soon the
 * thread answers.)
 */
async function onTheLoop<T>(promise: Promise<T>): Promise<{ onLoop: boolean; value: T }> {
  let settled = false;
  void promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  for (let i = 0; i < 50; i++) await Promise.resolve();
  return { onLoop: settled, value: await promise };
}

describe('sqlite: reads that grow with the store run off the event loop', () => {
  const dir = mkdtempSync(join(tmpdir(), 'linkhooks-off-loop-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("counts the queue, reads an endpoint's statistics and searches the log off the loop, and what a recovery left after it", async () => {
    const file = join(dir, 'store.db');
    const setup = createSqliteStore({ filename: file });
    await setup.migrate();
    await storeEndpoint(setup, 'acct_a', 'ep_a', T0);
    await setup.close();
    // Rows made inside SQLite: QUEUED pending deliveries and FAILED failed ones, one event each.
    const raw = new Database(file);
    const series = (n: number) =>
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ${n})`;
    raw.transaction(() => {
      // Every tenth event carries the same conversion id (4,300 of them), and 43 others another;
      // 50 more events carry a third, with 30 deliveries each (1,500, delivered).
      raw.exec(`${series(QUEUED + FAILED)} INSERT INTO events (id, account_id, name, body, created_at, conversion_id)
        SELECT printf('evt_%09d', i), 'acct_a', 'click', '{}', ${T0},
          CASE WHEN i % 10 = 0 THEN 'conv_shared' WHEN i % 1000 = 5 THEN 'conv_few' END FROM n`);
      raw.exec(`${series(50)} INSERT INTO events (id, account_id, name, body, created_at, conversion_id)
        SELECT printf('evw_%09d', i), 'acct_a', 'click', '{}', ${T0}, 'conv_wide' FROM n`);
      raw.exec(`${series(1_500)} INSERT INTO deliveries (id, event_id, endpoint_id, account_id,
          event_name, status, attempts, next_attempt_at, created_at, updated_at)
        SELECT printf('dlw_%09d', i), printf('evw_%09d', i / 30), 'ep_a', 'acct_a', 'click', 'delivered', 1,
          NULL, ${T0}, ${T0} FROM n`);
      raw.exec(`${series(QUEUED + FAILED)} INSERT INTO deliveries (id, event_id, endpoint_id, account_id,
          event_name, status, attempts, next_attempt_at, created_at, updated_at)
        SELECT printf('dlv_%09d', i), printf('evt_%09d', i), 'ep_a', 'acct_a', 'click',
          CASE WHEN i < ${QUEUED} THEN 'pending' ELSE 'failed' END, 0,
          CASE WHEN i < ${QUEUED} THEN ${T0} END, ${T0} + i, ${T0} FROM n`);
      // An attempt of each failed delivery, answered (no failure kind), of 10 to 1,009 ms.
      raw.exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ${FAILED})
        INSERT INTO attempts (delivery_id, number, endpoint_id, started_at, duration_ms, status_code, request_headers)
        SELECT printf('dlv_%09d', ${QUEUED} + i), 1, 'ep_a', ${T0} + i, 10 + i % 1000, 500, '{}' FROM n`);
    })();
    raw.close();

    const store = createSqliteStore({ filename: file });
    try {
      const first = await onTheLoop(store.stats());
      expect(first.value.queued).toEqual({ pending: QUEUED, awaiting_retry: 0, held: 0 });
      expect(first.onLoop).toBe(false);
      const again = await onTheLoop(store.stats());
      expect(again.onLoop).toBe(false);
      expect(again.value.queued.pending).toBe(QUEUED);

      const until = T0 + 2 * (QUEUED + FAILED);
      const recovered = await store.recoverDeliveries('acct_a', 'ep_a', {
        since: 0,
        until,
        limit: 10,
        now: T0,
      });
      expect(recovered).toEqual({ ok: true, recovered: 10 });
      // What is left is counted off the loop, on the other connection, which saw the commit; and
      // no further than asked.
      const left = await onTheLoop(store.countFailedDeliveries('ep_a', { since: 0, until, atMost: FAILED }));
      expect(left).toEqual({ value: FAILED - 10, onLoop: false });
      expect(await store.countFailedDeliveries('ep_a', { since: 0, until, atMost: 100 })).toBe(100);
      expect((await store.stats()).queued.pending).toBe(QUEUED + 10);

      const window = { since: T0, until: T0 + 3_600_000, bucketMs: 300_000 };
      const stats = await onTheLoop(store.endpointStats('acct_a', 'ep_a', window));
      expect(stats.onLoop).toBe(false);
      // 10 to 1,009 ms three times over: the 1,500th and the 2,850th of the 3,000 in order.
      expect(stats.value).toMatchObject({ p50Ms: 509, p95Ms: 959, lastSuccessAt: T0 + FAILED - 1 });
      expect(await store.endpointStats('acct_b', 'ep_a', window)).toBeNull();

      // A search reads the deliveries of the 4,300 events that carry the id: off the loop, page by page.
      const ids = (page: { items: { id: string }[] }) => page.items.map((d) => d.id);
      const tenth = (k: number) => `dlv_${String(QUEUED + FAILED - 10 * k).padStart(9, '0')}`;
      const searched = await onTheLoop(store.listDeliveries('acct_a', { search: 'conv_shared', limit: 3 }));
      expect(searched.onLoop).toBe(false);
      expect(ids(searched.value)).toEqual([tenth(1), tenth(2), tenth(3)]);
      const next = await onTheLoop(
        store.listDeliveries('acct_a', {
          search: 'conv_shared',
          limit: 3,
          cursor: searched.value.nextCursor!,
        }),
      );
      expect(next.onLoop).toBe(false);
      expect(ids(next.value)).toEqual([tenth(4), tenth(5), tenth(6)]);
      expect((await store.listDeliveries('acct_b', { search: 'conv_shared', limit: 3 })).items).toEqual([]);
      // A page that reads a page's worth stays on the loop, and so does a search of a few events.
      const page = await onTheLoop(store.listDeliveries('acct_a', { limit: 3 }));
      expect(page.onLoop).toBe(true);
      expect(page.value.items).toHaveLength(3);
      const few = await onTheLoop(store.listDeliveries('acct_a', { search: 'conv_few', limit: 3 }));
      expect(few.onLoop).toBe(true);
      expect(ids(few.value)).toEqual(
        [42_005, 41_005, 40_005].map((i) => `dlv_${String(i).padStart(9, '0')}`),
      );
      // Fewer events, but more deliveries than the loop reads.
      const wide = await onTheLoop(store.listDeliveries('acct_a', { search: 'conv_wide', limit: 2 }));
      expect(wide.onLoop).toBe(false);
      expect(ids(wide.value)).toEqual(['dlw_000001499', 'dlw_000001498']);
    } finally {
      await store.close();
    }
  });

  it('reads on the loop once its thread cannot run, and answers the reads that waited on it', async () => {
    const file = join(dir, 'gone.db');
    const store = createSqliteStore({ filename: file });
    await store.migrate();
    await storeEndpoint(store, 'acct_a', 'ep_a', T0);
    await store.pauseEndpoint('acct_a', 'ep_a', T0);
    // The store's connection keeps the file it opened; the thread, started by the first read below,
    // finds no file to open.
    rmSync(file);
    try {
      const [first, second] = await Promise.all([store.stats(), store.stats()]);
      expect(first).toEqual({ queued: { pending: 0, awaiting_retry: 0, held: 0 }, disabledEndpoints: 0 });
      expect(second).toEqual(first);
      const later = await onTheLoop(store.stats());
      expect(later.value).toEqual(first);
      // On the loop now: answered before the loop turned.
      expect(later.onLoop).toBe(true);
    } finally {
      await store.close();
    }
  });
});
