/**
 * The database lives as long as the run that made it: created at start, removed when the app stops.
 * The app never deletes a database it did not make in this run. One left by a run that was killed
 * (its lock names a pid no longer alive) is kept under a new name; a file no run of the app claims
 * (made by something else, or by a version that did not lock) makes the app refuse to start.
 */
import { existsSync, mkdirSync, renameSync, rmdirSync, rmSync } from 'node:fs';
import { dirname, join, parse } from 'node:path';
import type { DatabaseLock } from './data-lock.js';
import { StartError } from './start-error.js';

/** SQLite's companions of a database file: the write-ahead log, its index, the rollback journal. */
const SUFFIXES = ['', '-wal', '-shm', '-journal'];

const present = (dbFile: string) => SUFFIXES.filter((s) => existsSync(dbFile + s));

/** Refuses a database the lock does not show to be a killed run's; changes nothing. */
export function checkDatabase(dbFile: string, lock: DatabaseLock): void {
  if (present(dbFile).length > 0 && lock.leftBy === null) {
    throw new StartError(
      'database_not_ours',
      `${dbFile} already exists and no run of the reference app claims it`,
    );
  }
}

/**
 * Renames the database a killed run left (and its companions, so SQLite still opens it) to
 * `<name>.left-by-<pid><ext>`; returns the new name, or null when there was nothing to keep.
 */
export function keepLeftover(dbFile: string, lock: DatabaseLock): string | null {
  const suffixes = present(dbFile);
  if (suffixes.length === 0 || lock.leftBy === null) return null;
  const { dir, name, ext } = parse(dbFile);
  let kept = join(dir, `${name}.left-by-${lock.leftBy}${ext}`);
  for (let n = 2; SUFFIXES.some((s) => existsSync(kept + s)); n++)
    kept = join(dir, `${name}.left-by-${lock.leftBy}-${n}${ext}`);
  for (const suffix of suffixes) renameSync(dbFile + suffix, kept + suffix);
  return kept;
}

/** Removes the database this run made. */
export function removeDatabase(dbFile: string): void {
  for (const suffix of SUFFIXES) {
    try {
      rmSync(dbFile + suffix, { force: true });
    } catch {
      // A platform that cannot unlink an open file keeps it; the next start asks for it to be moved.
    }
  }
}

/**
 * Makes the database's folder where there is none; the function it returns removes the folders it
 * made, from the deepest up, while they are empty: a start refused, or a run that ended, leaves no
 * empty folders of `--db new/folder/file.db` behind.
 */
export function makeFolderOf(dbFile: string): () => void {
  const folder = dirname(dbFile);
  const first = mkdirSync(folder, { recursive: true });
  return () => {
    if (first === undefined) return;
    for (let dir = folder; ; dir = dirname(dir)) {
      try {
        rmdirSync(dir);
      } catch {
        return; // not empty (a kept database, the user's own files): kept, with the folders above it
      }
      if (dir === first) return;
    }
  };
}
