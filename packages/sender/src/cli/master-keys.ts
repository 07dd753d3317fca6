/**
 * The master keys `serve`, `worker` and `rotate-master-key` run with (design D29, D30), read from
 * where master-key-options.ts decided. Keys stay in memory: messages name files, never keys.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, renameSync } from 'node:fs';
import { keepKeyFile, keyFileOf, readKeyFile, syncFolder } from './master-key-file.js';
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

/**
 * The settings with every key file the operator named read now, as the keys they hold (or a
 * refusal naming the file): done before anything is written, so a wrong path leaves no database
 * folder or lock behind. Only the key file made beside the database waits for the process lock.
 */
export function withNamedKeysRead(settings: MasterKeySettings, say: Say): MasterKeySettings {
  const read = (ref: KeyRef): KeyRef =>
    ref.kind === 'value' ? ref : { kind: 'value', source: ref.source, text: textOf(ref, say) };
  return {
    ...settings,
    ...(settings.current ? { current: read(settings.current) } : {}),
    previous: settings.previous.map(read),
  };
}

/** Where an interrupted key-file rotation leaves the new key (see `rotationOf`). */
export const nextKeyFileOf = (keyFile: string) => `${keyFile}.next`;
/** Where a key-file rotation keeps the key it replaced (see `rotationOf`). */
export const previousKeyFileOf = (keyFile: string) => `${keyFile}.previous`;

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
  // A process that still ran on the replaced key may have sealed a secret under it after the
  // rotation: it stays readable, and the start-up seal moves it under the current key.
  const previous = previousKeyFileOf(keyFile);
  if (existsSync(previous)) {
    previousMasterKeys.push(readKeyFile(previous, 'the key file', say.warn));
    say.info(
      `${previous} is read as a previous master key; remove it once every process runs on the current key`,
    );
  }
  return { masterKey: key, previousMasterKeys };
}

/** What to do once every secret is under a key the operator gave. */
const GIVEN_KEY_NEXT =
  'Restart every linkhooks-sender process with the new key; the previous key is then no longer needed.';

/**
 * The keys `rotate-master-key` seals with, and what to do once every secret is sealed. With a key
 * given, the operator made the new key: seal under it. With the SQLite key file, make a new key
 * beside it (reused if an interrupted rotation left one), seal under it, then move it into place.
 */
export function rotationOf(
  settings: MasterKeySettings,
  say: Say,
): MasterKeys & { /** Puts the new key in place; says what to do next. */ finish(): string } {
  if (settings.current || !settings.keyFile) {
    if (!settings.current)
      throw new UsageError('rotate-master-key: an in-memory database keeps no secrets at rest');
    return { ...masterKeysFor(settings, say), finish: () => GIVEN_KEY_NEXT };
  }
  const keyFile = settings.keyFile;
  const old = keyFileOf(keyFile, say.warn).key;
  const next = nextKeyFileOf(keyFile);
  const fresh = keyFileOf(next, say.warn).key;
  return {
    masterKey: fresh,
    previousMasterKeys: [old, ...settings.previous.map((ref) => textOf(ref, say))],
    // The replaced key is kept, never destroyed: a process still running on it may seal a secret
    // under it after this rotation (design D30).
    finish: () => {
      const previous = previousKeyFileOf(keyFile);
      keepKeyFile(keyFile, previous);
      renameSync(next, keyFile);
      syncFolder(keyFile);
      return `Start the service again: it reads the new key from ${keyFile}. The old key is kept in ${previous}; delete that file once every process has restarted on the new key.`;
    },
  };
}
