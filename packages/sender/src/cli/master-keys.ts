/**
 * The master keys `serve`, `worker` and `rotate-master-key` run with (design D29, D30), read from
 * where master-key-options.ts decided. Keys stay in memory: messages name files, never keys.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, renameSync } from 'node:fs';
import { keyFileOf, readKeyFile } from './master-key-file.js';
import type { KeyRef, MasterKeySettings } from './master-key-options.js';
import { UsageError } from './usage-error.js';

export interface MasterKeys {
  masterKey: string;
  previousMasterKeys: string[];
}

export interface Say {
  info(message: string): void;
  warn(message: string): void;
}

const textOf = (ref: KeyRef, say: Say) =>
  ref.kind === 'value' ? ref.text : readKeyFile(ref.path, ref.source, say.warn);

/** Where an interrupted key-file rotation leaves the new key (see `rotationOf`). */
export const nextKeyFileOf = (keyFile: string) => `${keyFile}.next`;

/**
 * The keys to start with. SQLite without a key given: the key file beside the database, made on
 * first start. A key file left beside the database when a key is given is read as a previous key,
 * so its secrets move under the given one.
 *
 * @example
 * const keys = masterKeysFor(command.keys, say); // createSender({ store, ...keys })
 */
export function masterKeysFor(settings: MasterKeySettings, say: Say): MasterKeys {
  const previousMasterKeys = settings.previous.map((ref) => textOf(ref, say));
  const { keyFile } = settings;
  if (settings.current) {
    if (keyFile && existsSync(keyFile)) {
      previousMasterKeys.push(readKeyFile(keyFile, 'the key file', say.warn));
      say.info(
        `${keyFile} is read as a previous master key; remove it once every secret is under the given key`,
      );
    }
    return { masterKey: textOf(settings.current, say), previousMasterKeys };
  }
  // An in-memory database keeps nothing at rest: a key for this process alone.
  if (!keyFile) return { masterKey: randomBytes(32).toString('base64'), previousMasterKeys };
  const { key, created } = keyFileOf(keyFile, say.warn);
  if (created) say.info(`generated the master key file ${keyFile}; back it up with the database`);
  const next = nextKeyFileOf(keyFile);
  if (existsSync(next)) {
    previousMasterKeys.push(readKeyFile(next, 'the key file', say.warn));
    say.warn(
      `a key rotation was interrupted (${next} is left): run linkhooks-sender rotate-master-key again`,
    );
  }
  return { masterKey: key, previousMasterKeys };
}

/**
 * The keys `rotate-master-key` seals with, and what to do once every secret is sealed. With a key
 * given, the operator made the new key: seal under it. With the SQLite key file, make a new key
 * beside it (reused if an interrupted rotation left one), seal under it, then move it into place.
 */
export function rotationOf(settings: MasterKeySettings, say: Say): MasterKeys & { finish(): void } {
  if (settings.current || !settings.keyFile) {
    if (!settings.current)
      throw new UsageError('rotate-master-key: an in-memory database keeps no secrets at rest');
    return { ...masterKeysFor(settings, say), finish: () => {} };
  }
  const keyFile = settings.keyFile;
  const old = keyFileOf(keyFile, say.warn).key;
  const next = nextKeyFileOf(keyFile);
  const fresh = keyFileOf(next, say.warn).key;
  return {
    masterKey: fresh,
    previousMasterKeys: [old, ...settings.previous.map((ref) => textOf(ref, say))],
    finish: () => renameSync(next, keyFile),
  };
}
