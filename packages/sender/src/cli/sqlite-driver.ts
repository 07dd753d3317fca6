/**
 * better-sqlite3 is a native module, built for one Node.js version at install: run under another,
 * or installed without its build, it cannot load. Whichever file it was opening then (the lock
 * file, the database), the message is about the driver and how to build it again.
 */
import Database from 'better-sqlite3';
import { DatabaseError } from './database-error.js';

const REBUILD = 'run `npm rebuild better-sqlite3` in the project, then start again';

/** The clear error for a driver that cannot load, or null when `error` is another failure. */
export function driverFailure(error: unknown): DatabaseError | null {
  const { code, message = '' } = (error ?? {}) as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : '';
  const built = /NODE_MODULE_VERSION (\d+)/.exec(text)?.[1];
  if (built !== undefined) {
    return new DatabaseError(
      `the SQLite driver (better-sqlite3) was built for another Node.js version (module version ${built}), not for this one (Node.js ${process.versions.node}, module version ${process.versions.modules}): ${REBUILD}`,
    );
  }
  // The bindings package's own words when no build is there (an install that skipped its scripts).
  if (text.startsWith('Could not locate the bindings file')) {
    return new DatabaseError(`the SQLite driver (better-sqlite3) is not built: ${REBUILD}`);
  }
  if (code === 'ERR_DLOPEN_FAILED') {
    return new DatabaseError(
      `the SQLite driver (better-sqlite3) cannot be loaded (${text.split('\n', 1)[0]}): ${REBUILD}`,
    );
  }
  return null;
}

/**
 * Loads the driver, or throws the clear error: done before a file or folder is made, so a driver
 * that cannot load leaves nothing behind.
 */
export function loadDriver(): void {
  if (probe) return; // the lock and the store both ask; the driver loads once per process
  try {
    // Kept, not left to the collector (store/sqlite/database.ts).
    probe = new Database(':memory:');
    probe.close();
  } catch (error) {
    throw driverFailure(error) ?? error;
  }
}
let probe: Database.Database | undefined;
