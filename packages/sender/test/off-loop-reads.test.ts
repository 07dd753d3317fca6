/**
 * On SQLite, the reads that cost what the store holds (the counts behind a `/metrics` scrape, a
 * recovery's count of what is left, an endpoint's statistics over a window) run on a thread of their
 * own: the event loop goes on turning while they read, and they see what was committed before them.
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

/** Turns of the event loop until `promise` settles; the value it settled with. */
async function turnsWhile<T>(promise: Promise<T>): Promise<{ turns: number; value: T }> {
  let turns = 0;
  let settled = false;
  const spin = () => {
    if (settled) return;
    turns++;
    setImmediate(spin);
  };
  setImmediate(spin);
  try {
    return { value: await promise, turns };
  } finally {
    settled = true;
  }
}

describe('sqlite: reads that grow with the store run off the event loop', () => {
  const dir = mkdtempSync(join(tmpdir(), 'linkhooks-off-loop-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("counts the queue and reads an endpoint's statistics while the loop turns, and what a recovery left after it", async () => {
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
      raw.exec(`${series(QUEUED + FAILED)} INSERT INTO events (id, account_id, name, body, created_at)
        SELECT printf('evt_%09d', i), 'acct_a', 'click', '{}', ${T0} FROM n`);
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
      const first = await turnsWhile(store.stats());
      expect(first.value.queued).toEqual({ pending: QUEUED, awaiting_retry: 0, held: 0 });
      // Read on the loop, the answer came before any turn: here the loop turned while it counted.
      const again = await turnsWhile(store.stats());
      expect(again.turns).toBeGreaterThan(0);
      expect(again.value.queued.pending).toBe(QUEUED);

      const until = T0 + 2 * (QUEUED + FAILED);
      const recovered = await store.recoverDeliveries('acct_a', 'ep_a', {
        since: 0,
        until,
        limit: 10,
        now: T0,
      });
      // The count on the other connection saw what the recovery committed.
      expect(recovered).toEqual({ ok: true, recovered: 10, remaining: FAILED - 10 });
      expect((await store.stats()).queued.pending).toBe(QUEUED + 10);

      const window = { since: T0, until: T0 + 3_600_000, bucketMs: 300_000 };
      const stats = await turnsWhile(store.endpointStats('acct_a', 'ep_a', window));
      expect(stats.turns).toBeGreaterThan(0);
      // 10 to 1,009 ms three times over: the 1,500th and the 2,850th of the 3,000 in order.
      expect(stats.value).toMatchObject({ p50Ms: 509, p95Ms: 959, lastSuccessAt: T0 + FAILED - 1 });
      expect(await store.endpointStats('acct_b', 'ep_a', window)).toBeNull();
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
      const later = await turnsWhile(store.stats());
      expect(later.value).toEqual(first);
      // On the loop now: answered before the loop turned.
      expect(later.turns).toBe(0);
    } finally {
      await store.close();
    }
  });
});
