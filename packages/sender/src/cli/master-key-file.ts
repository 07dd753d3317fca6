/**
 * Master key files (design D29): read one the operator names, or make the one beside a SQLite
 * database on first start. The key never reaches a message or a log line; only the file's path does.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { parseMasterKey } from '../store/secret-cipher.js';
import { unreadable } from './file-error.js';
import { UsageError } from './usage-error.js';

export type Warn = (message: string) => void;

/**
 * The key in `path` as text, checked; warns when others than its owner can read the file.
 *
 * @example
 * const key = readKeyFile('/etc/linkhooks/master.key', '--master-key-file', console.warn);
 */
export function readKeyFile(path: string, source: string, warn: Warn): string {
  let text: string;
  let mode: number;
  try {
    text = readFileSync(path, 'utf8');
    mode = statSync(path).mode;
  } catch (error) {
    throw new UsageError(`${source}: cannot read the master key file ${path} (${unreadable(error)})`);
  }
  try {
    parseMasterKey(text, `the master key in ${path}`);
  } catch (error) {
    throw new UsageError(`${source}: ${(error as Error).message}`);
  }
  // Windows has no group/other bits: its modes say nothing about who can read the file.
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    warn(
      `${path} can be read by other users of this machine (mode ${(mode & 0o777).toString(8)}); ` +
        `restrict it to its owner: chmod 600 ${path}`,
    );
  }
  return text.trim();
}

/**
 * The key in `path`, made first if there is none: 32 random bytes as base64, owner-only (0600).
 * The whole key is written to a private temporary file and then linked into place, which, like
 * O_EXCL, fails if the file exists: two processes starting at once agree on one key, and none
 * ever reads a half-written file.
 *
 * @example
 * const { key, created } = keyFileOf('./data/linkhooks.db.master-key', warn);
 */
export function keyFileOf(path: string, warn: Warn): { key: string; created: boolean } {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    writeSync(fd, `${randomBytes(32).toString('base64')}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temporary, path);
    syncFolder(path);
    return { key: readKeyFile(path, 'the key file', warn), created: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return { key: readKeyFile(path, 'the key file', warn), created: false };
  } finally {
    unlinkSync(temporary);
  }
}

/** Syncs the folder holding `path`, so a power cut cannot lose the file's name (design D29). */
export function syncFolder(path: string): void {
  const fd = openSync(dirname(path), 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Copies the key file `from` to `to` whole: written to a private temporary file, synced, then
 * renamed over `to`, so `to` is never half-written.
 *
 * @example
 * keepKeyFile('./data/linkhooks.db.master-key', './data/linkhooks.db.master-key.previous');
 */
export function keepKeyFile(from: string, to: string): void {
  const temporary = `${to}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    writeSync(fd, readFileSync(from));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, to);
  syncFolder(to);
}
