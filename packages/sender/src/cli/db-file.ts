/**
 * `--db-file` / `LINKHOOKS_DB_FILE`: the database URL read from a file, so a password in it stays
 * out of `ps` and shell history. Never echoes the URL: errors and warnings name the file only.
 */
import { readFileSync, statSync } from 'node:fs';
import { unreadable } from './file-error.js';

/** A file that gives no URL; options.ts turns it into a usage error. */
export class DbFileError extends Error {
  override readonly name = 'DbFileError';
}

export type Warn = (message: string) => void;

const toStderr: Warn = (message) => {
  process.stderr.write(`linkhooks-sender: warning: ${message}\n`);
};

/**
 * The URL in the file, surrounding whitespace dropped; warns when others than its owner can read it.
 *
 * @example
 * const db = readDbFile('/etc/linkhooks/db-url', '--db-file'); // postgres://linkhooks:…@db/linkhooks
 */
export function readDbFile(path: string, source: string, warn: Warn = toStderr): string {
  if (path === '') throw new DbFileError(`${source} needs the path of a file holding the database URL`);
  let text: string;
  let mode: number;
  try {
    text = readFileSync(path, 'utf8');
    mode = statSync(path).mode;
  } catch (error) {
    throw new DbFileError(`${source}: cannot read ${path} (${unreadable(error)})`);
  }
  const db = text.trim();
  if (db === '') throw new DbFileError(`${source}: ${path} is empty`);
  // Windows has no group/other bits: its modes say nothing about who can read the file.
  if (process.platform !== 'win32' && (mode & 0o044) !== 0) {
    warn(
      `${source}: ${path} can be read by other users of this machine (mode ${(mode & 0o777).toString(8)}); ` +
        `restrict it to its owner: chmod 600 ${path}`,
    );
  }
  return db;
}
