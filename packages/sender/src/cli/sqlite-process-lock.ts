/**
 * One process serves and delivers on a SQLite database (`serve` or `worker`): a second would share
 * the file's write lock with it, and each of its writes could hold the other's event loop for up
 * to the busy timeout (5 s) — requests, timers and lease heartbeats stopped — where PostgreSQL
 * (design D17) is the store for several processes. The process holds an exclusive lock on a file
 * beside the database (`<database>.lock`) while it runs; the system releases it when the process
 * ends, killed or not, so a restart never finds a stale one. Short commands (`migrate`,
 * `accounts …`) take no lock and run beside it.
 */
import { closeSync, fchmodSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { isInMemory } from '../store/sqlite/in-memory.js';
import { DatabaseError } from './database-error.js';
import { loadDriver } from './sqlite-driver.js';
import { sqliteFileOf } from './sqlite-url.js';

/** How long a start waits for the lock before it says another process holds it. */
const LOCK_WAIT_MS = 2_000;

export interface ProcessLock {
  release(): void;
}

const NO_LOCK: ProcessLock = { release() {} };

/**
 * Holds the lock for the database `db` (a `--db` URL) until released; refuses when another process
 * holds it. Only a SQLite file has one: PostgreSQL and an in-memory database need none.
 * `before`: the command that must wait for that process to stop (rather than run beside it).
 */
export function holdProcessLock(db: string, before?: string): ProcessLock {
  const file = sqliteFileOf(db);
  if (file === undefined || isInMemory(file)) return NO_LOCK;
  const path = `${file}.lock`;
  let lock: Database.Database;
  loadDriver();
  try {
    // The database's folder is made here as the store would make it (a first start), and the lock
    // file is the owner's alone: another user who could read it could hold it and stop the service.
    mkdirSync(dirname(path), { recursive: true });
    const fd = openSync(path, 'a', 0o600);
    try {
      fchmodSync(fd, 0o600); // a file made before, by a wider umask or by hand
    } finally {
      closeSync(fd);
    }
    // Waits a moment rather than none: of two processes starting at once, the one on its way to
    // the exclusive lock waits for the other's shared lock to go.
    lock = new Database(path, { timeout: LOCK_WAIT_MS });
  } catch (error) {
    throw new DatabaseError(`cannot open the lock file ${path}: ${(error as Error).message}`);
  }
  try {
    // An exclusive transaction never ended holds the file's exclusive lock while the process runs.
    // Not `locking_mode = EXCLUSIVE`: a start refused in that mode kept its shared lock until it
    // closed, and two starting at once waited on each other until both were refused.
    lock.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    lock.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY') {
      throw new DatabaseError(
        before
          ? `another linkhooks-sender process is serving sqlite:${file}: stop it ${before}, then start it again.`
          : `another linkhooks-sender process is serving sqlite:${file}: on SQLite one process serves and ` +
              'delivers. Stop that one first, or use PostgreSQL to run several.',
      );
    }
    throw new DatabaseError(`cannot lock ${path}: ${(error as Error).message}`);
  }
  return {
    release() {
      if (lock.open) lock.close();
    },
  };
}
