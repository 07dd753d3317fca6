import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { conditions } from '../../../test/helpers/conditions.js';
import type { EventRecord } from '../records.js';
import { openSqlite } from './database.js';
import { migrateSqlite } from './migrate.js';
import { publish } from './publish.js';
import { createWalSync } from './wal-sync.js';
import { createWriteQueue } from './write-queue.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const event = (id: string): EventRecord => ({
  id,
  accountId: 'acct_1',
  name: 'click',
  body: new TextEncoder().encode('{"event":"click"}'),
  createdAt: 1_700_000_000_000,
});

/** A migrated database in a folder of its own, removed after the test. */
function migratedDb(name: string) {
  const dir = mkdtempSync(join(tmpdir(), name));
  dirs.push(dir);
  const db = openSqlite(join(dir, 'x.db'));
  migrateSqlite(db)();
  return db;
}

/** One turn of the event loop: the write queue flushes what was queued before it. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** A migrated database whose WAL syncs the test finishes by hand (`syncs`, in the order asked). */
function withManualSync(name: string) {
  const db = migratedDb(name);
  const syncs: ((error: unknown) => void)[] = [];
  const asked = conditions();
  const wal = createWalSync(`${db.file}-wal`, (_fd, done) => {
    syncs.push(done);
    asked.changed();
  });
  return { db, syncs, asked, wal };
}

describe('a SQLite publish (design D33)', () => {
  it('is answered only after a WAL sync that started after its commit, and not before', async () => {
    const { db, syncs, asked, wal } = withManualSync('publish-sync-');
    const { publish: write } = publish(
      db,
      createWriteQueue(db, () => wal.committed()),
      wal,
    );
    let answered = false;
    const published = write(event('evt_1'), () => 'dlv_1').then((r) => {
      answered = true;
      return r;
    });
    // The commit is made (another connection sees it), but nothing is answered until the sync.
    await asked.until(() => syncs.length === 1);
    expect(db.st('SELECT count(*) AS n FROM events').get()).toEqual({ n: 1 });
    await nextTurn();
    expect(answered).toBe(false);
    syncs[0]!(null);
    await expect(published).resolves.toMatchObject({ eventId: 'evt_1', duplicate: false });
    // A sync that fails refuses the publish it covered.
    const refused = write(event('evt_2'), () => 'dlv_2');
    await asked.until(() => syncs.length === 2);
    syncs[1]!(new Error('EIO'));
    await expect(refused).rejects.toMatchObject({ code: 'storage_failed' });
    wal.close();
    await db.close();
  });

  it('waits for the sync under way, so the publishes made during it share one commit after it', async () => {
    const { db, syncs, asked, wal } = withManualSync('publish-paced-');
    let commits = 0;
    const { publish: write, commits: publishCommits } = publish(
      db,
      // A stopped clock: the budget never splits a turn's writes, however slow the machine.
      createWriteQueue(
        db,
        () => {
          commits++;
          return wal.committed();
        },
        () => 0,
      ),
      wal,
    );
    const count = () => db.st('SELECT count(*) AS n FROM events').pluck().get();
    const first = write(event('evt_1'), () => 'dlv_1');
    await asked.until(() => syncs.length === 1);
    expect([commits, count()]).toEqual([1, 1]);
    // Two publishes in turns of their own while that sync runs: neither is written yet.
    const second = write(event('evt_2'), () => 'dlv_2');
    await nextTurn();
    const third = write(event('evt_3'), () => 'dlv_3');
    await nextTurn();
    expect([commits, count()]).toEqual([1, 1]);
    syncs[0]!(null);
    await expect(first).resolves.toMatchObject({ eventId: 'evt_1' });
    // Both in one commit, and one sync for it.
    await asked.until(() => syncs.length === 2);
    expect([commits, count()]).toEqual([2, 3]);
    expect(publishCommits()).toBe(2);
    syncs[1]!(null);
    await expect(Promise.all([second, third])).resolves.toMatchObject([
      { eventId: 'evt_2' },
      { eventId: 'evt_3' },
    ]);
    wal.close();
    await db.close();
  });

  it('refuses a publish held during a sync that fails, without writing it', async () => {
    const { db, syncs, asked, wal } = withManualSync('publish-held-failed-');
    const { publish: write } = publish(
      db,
      createWriteQueue(
        db,
        () => wal.committed(),
        () => 0,
      ),
      wal,
    );
    const first = expect(write(event('evt_1'), () => 'dlv_1')).rejects.toMatchObject({
      code: 'storage_failed',
    });
    await asked.until(() => syncs.length === 1);
    const held = expect(write(event('evt_2'), () => 'dlv_2')).rejects.toMatchObject({
      code: 'storage_failed',
    });
    await nextTurn();
    syncs[0]!(new Error('EIO'));
    await Promise.all([first, held]);
    // The first was written before its sync failed; the held one never was.
    expect(db.st('SELECT id FROM events').pluck().all()).toEqual(['evt_1']);
    wal.close();
    await db.close();
  });

  it('fails a publish of a batch alone: those before it commit without it, those after it in the next commit', async () => {
    const db = migratedDb('publish-batch-');
    let commits = 0;
    const { publish: write, commits: publishCommits } = publish(
      db,
      createWriteQueue(
        db,
        () => ++commits,
        () => 0,
      ),
      null,
    );
    await write(event('evt_taken'), () => 'dlv_0');
    expect(commits).toBe(1);
    // Made in one turn, so one batch: the middle one's id is taken, and it alone is refused.
    const results = await Promise.allSettled([
      write(event('evt_a'), () => 'dlv_a'),
      write(event('evt_taken'), () => 'dlv_b'),
      write(event('evt_c'), () => 'dlv_c'),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({
      code: 'SQLITE_CONSTRAINT_PRIMARYKEY',
    });
    const ids = db.st('SELECT id FROM events ORDER BY id').pluck().all();
    expect(ids).toEqual(['evt_a', 'evt_c', 'evt_taken']);
    // Rolled back with the failed one, the first went again alone; the last, in a commit of its own.
    expect(commits).toBe(3);
    expect(publishCommits()).toBe(3);
    await db.close();
  });
});
