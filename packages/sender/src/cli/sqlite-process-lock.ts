/**
 * One process serves and delivers on a SQLite database (`serve` or `worker`): a second would share
 * the file's write lock with it, and each of its writes could hold the other's event loop for up
 * to the busy timeout (5 s) — requests, timers and lease heartbeats stopped — where PostgreSQL
 * (design D17) is the store for several processes. The process holds an exclusive lock on a file
 * beside the database (`<database>.lock`) while it runs; the system releases it when the process
 * ends, killed or not, so a restart never finds a stale one. Short commands (`migrate`,
 * `accounts …`) take no lock and run beside it.
 */
import Database from 'better-sqlite3';
import { DatabaseError, maskDb } from './open-store.js';

export interface ProcessLock {
  release(): void;
}

/** Holds the lock for `db` (a `sqlite:` URL) until released; refuses when another process holds it. */
export function holdSqliteProcessLock(db: string): ProcessLock {
  const file = db.slice('sqlite:'.length);
  if (file === ':memory:' || file === '') return { release() {} };
  const lock = new Database(`${file}.lock`, { timeout: 0 });
  try {
    lock.pragma('locking_mode = EXCLUSIVE');
    lock.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    lock.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY') {
      throw new DatabaseError(
        `another linkhooks-sender process is serving ${maskDb(db)}: on SQLite one process serves and ` +
          'delivers. Stop that one first, or use PostgreSQL to run several.',
      );
    }
    throw error;
  }
  return {
    release() {
      if (lock.open) lock.close();
    },
  };
}
