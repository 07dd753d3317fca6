/**
 * One run at a time per database: `<db>.lock` holds the pid of the run using it. The lock appears
 * whole (a hard link to a file that already holds the pid), so no reader ever finds it empty. A lock
 * whose pid is no longer alive was left by a run that was killed; the next run takes it over.
 */
import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { StartError } from './start-error.js';

export interface DatabaseLock {
  file: string;
  /** Set when the lock was left by a run that died: the pid it named. */
  leftBy: number | null;
  /** Removes the lock if it is still this process's. Safe to call twice. */
  release(): void;
}

export function lockDatabase(dbFile: string): DatabaseLock {
  const file = `${dbFile}.lock`;
  const staged = `${file}.${process.pid}`;
  writeFileSync(staged, `${process.pid}\n`);
  let leftBy: number | null = null;
  try {
    for (let tries = 0; ; tries++) {
      try {
        linkSync(staged, file);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || tries === 3) throw error;
      }
      const holder = readHolder(file);
      if (holder === undefined) continue; // released in between
      if (isAlive(holder)) {
        throw new StartError('database_in_use', `another reference app (pid ${holder}) is using ${dbFile}`, {
          pid: holder,
        });
      }
      leftBy = holder;
      // Two starts taking over the same dead lock at the same instant could both get through;
      // starts are made by hand, so that window is accepted.
      rmSync(file, { force: true });
    }
  } finally {
    rmSync(staged, { force: true });
  }
  return {
    file,
    leftBy,
    release() {
      if (readHolder(file) === process.pid) rmSync(file, { force: true });
    },
  };
}

/** The pid in a lock file; undefined if there is no file, 0 if it holds no pid. */
function readHolder(file: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(file, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : 0;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function isAlive(pid: number): boolean {
  if (pid === 0) return false;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0); // signal 0: only asks whether the process exists
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
