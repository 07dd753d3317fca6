import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { conditions } from '../../../test/helpers/conditions.js';
import { CHECKPOINTER_AFTER_COMMITS } from './checkpointer.js';
import { openSqlite, type SqliteDb } from './database.js';
import { createWriteQueue } from './write-queue.js';

/** The thread checkpoints this often here: the tests wait on its checkpoints, not on a clock. */
const EVERY_MS = 5;

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/**
 * A store's database whose checkpoints' thread tells what it does: `started` resolves once it has
 * taken over, `checkpointed(condition)` once `condition` holds, checked at the call and after each
 * of the thread's checkpoints (the test's own time-out bounds the wait).
 */
function openFile(): {
  db: SqliteDb;
  file: string;
  started: Promise<void>;
  checkpointed: (condition: () => boolean) => Promise<void>;
} {
  const dir = mkdtempSync(join(tmpdir(), 'checkpointer-'));
  dirs.push(dir);
  const file = join(dir, 'x.db');
  let begin: () => void = () => undefined;
  const started = new Promise<void>((resolve) => {
    begin = resolve;
  });
  const checkpoints = conditions();
  const db = openSqlite(file, {
    started: () => begin(),
    checkpointed: checkpoints.changed,
    everyMs: EVERY_MS,
  });
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB)');
  return { db, file, started, checkpointed: checkpoints.until };
}

describe('WAL checkpoints off the event loop (design D57)', () => {
  it('move to a thread after enough commits: the connection stops checkpointing, the thread does it', async () => {
    const { db, file, started, checkpointed } = openFile();
    const insert = db.immediate((n: number) => {
      for (let i = 0; i < n; i++) db.st('INSERT INTO t (body) VALUES (?)').run(Buffer.alloc(4096, i));
    });
    const autocheckpoint = () => db.st('PRAGMA wal_autocheckpoint').pluck().get();
    for (let i = 1; i < CHECKPOINTER_AFTER_COMMITS; i++) insert(1);
    expect(autocheckpoint()).toBe(1000);
    insert(1);
    await started;
    expect(autocheckpoint()).toBe(0);

    // Some 1,500 pages: past the 1,000 at which the connection would have checkpointed itself.
    const before = statSync(file).size;
    for (let i = 0; i < 15; i++) insert(100);
    // Only a checkpoint copies pages into the database file; the thread's does it.
    await checkpointed(() => statSync(file).size > before + 4 * 1024 * 1024);

    // Closed, the thread's connection first: the store's is the last, and removes the WAL.
    await db.close();
    expect(existsSync(`${file}-wal`)).toBe(false);
  });

  it('names the file absolutely, so the thread opens the same file whatever the working directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'checkpointer-'));
    dirs.push(dir);
    const db = openSqlite(relative(process.cwd(), join(dir, 'y.db')));
    expect(isAbsolute(db.file)).toBe(true);
    expect(db.file).toBe(join(dir, 'y.db'));
    await db.close();
  });

  it('stays off for a store that closes before it has written much', async () => {
    const { db, file } = openFile();
    db.immediate(() => db.st('INSERT INTO t (body) VALUES (?)').run(Buffer.alloc(10)))();
    expect(db.st('PRAGMA wal_autocheckpoint').pluck().get()).toBe(1000);
    await db.close();
    expect(existsSync(`${file}-wal`)).toBe(false);
  });

  it('holds the delivery path’s writes for one checkpoint once the WAL is past its limit, and the WAL starts over (design D58)', async () => {
    const { db, write, insert, order, holds, signals, checkpoints, lastLog } = await walLimited();
    // Writes that never pause, until the thread finds the WAL past its limit (a checkpoint alone
    // never lets the WAL start over while they go on); each one that runs after the hold began
    // says so.
    while (holds.length === 0) {
      await write(() => {
        insert(4)();
        if (holds.length > 0) order.push('written');
      });
    }
    await write(() => order.push('written'));
    // None ran between the hold and the catch-up.
    expect(order.slice(0, 3)).toEqual(['holding', 'caught up', 'written']);
    // The next write began the WAL again: it holds that write's frames, not the history's, as the
    // thread's second checkpoint after it finds (the first may have begun before it).
    await write(insert(4));
    const from = checkpoints();
    await signals.until(() => checkpoints() >= from + 2);
    expect(lastLog()).toBeLessThan(LIMIT);
    await db.close();
  });

  it('does not hold the writes at every checkpoint while another connection keeps the WAL from starting over', async () => {
    const { db, file, write, insert, signals, holds, checkpoints, lastLog } = await walLimited();
    // A few frames per checkpoint, so a hold at every checkpoint would show.
    const tick = async () => {
      await write(insert(2));
      const from = checkpoints();
      await signals.until(() => checkpoints() > from);
    };
    await tick();
    // Another connection reading an older snapshot: no checkpoint may copy the frames after it.
    const reader = new Database(file, { readonly: true });
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) FROM t').get();
    try {
      while (holds.length < 2) await tick();
      // After a catch-up that could not let the WAL start over, the next hold waits for another
      // limit's worth of frames.
      expect(holds[1]!).toBeGreaterThanOrEqual(holds[0]! + LIMIT);
    } finally {
      reader.exec('COMMIT');
      reader.close();
    }
    // The reader gone, the WAL starts over (here at a write after a checkpoint, since these
    // writes pause between checkpoints), as the thread's checkpoints find.
    while (lastLog() >= LIMIT) await tick();
    await db.close();
  });
});

const LIMIT = 64;

/**
 * A file store whose WAL limit is LIMIT frames, its checkpoints' thread started, and a write queue;
 * `holds`: the WAL's frames at each hold; `order`: the holds and catch-ups as they came;
 * `checkpoints()`: the thread's checkpoints so far; `lastLog()`: the WAL's frames at the last one.
 */
async function walLimited() {
  const dir = mkdtempSync(join(tmpdir(), 'checkpointer-'));
  dirs.push(dir);
  const file = join(dir, 'z.db');
  const order: string[] = [];
  const holds: number[] = [];
  const signals = conditions();
  let started = false;
  let checkpoints = 0;
  let lastLog = Number.NaN;
  const db = openSqlite(file, {
    limitFrames: LIMIT,
    everyMs: EVERY_MS,
    checkpointed: (log) => {
      checkpoints++;
      lastLog = log;
      signals.changed();
    },
    started: () => {
      started = true;
      signals.changed();
    },
    holding: (log) => {
      holds.push(log);
      order.push('holding');
      signals.changed();
    },
    caughtUp: () => {
      order.push('caught up');
      signals.changed();
    },
  });
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB)');
  let commits = 0;
  const write = createWriteQueue(db, () => ++commits);
  const insert = (rows: number) => () => {
    for (let i = 0; i < rows; i++) db.st('INSERT INTO t (body) VALUES (?)').run(Buffer.alloc(4096, i));
  };
  for (let i = 0; i < CHECKPOINTER_AFTER_COMMITS; i++) await write(insert(0));
  await signals.until(() => started);
  return {
    db,
    file,
    write,
    insert,
    signals,
    order,
    holds,
    checkpoints: () => checkpoints,
    lastLog: () => lastLog,
  };
}
