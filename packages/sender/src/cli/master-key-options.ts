/**
 * Where `serve`, `worker` and `rotate-master-key` take the master keys from (design D29, D30):
 * decided from the flags, the environment and the database alone, before anything is opened. A
 * flag wins over its variable; a key given twice is refused rather than one silently ignored.
 */
import { isInMemory } from '../store/sqlite/in-memory.js';
import { sqliteFileOf } from './sqlite-url.js';
import { UsageError } from './usage-error.js';

type Env = Record<string, string | undefined>;

/** A key as given: its text from the environment, or a file holding it. */
export type KeyRef =
  | { kind: 'value'; source: string; text: string }
  | { kind: 'file'; source: string; path: string };

export interface MasterKeySettings {
  /** The key to encrypt with, when the operator gives one. */
  current?: KeyRef;
  /** Keys still accepted while a rotation runs. */
  previous: KeyRef[];
  /**
   * SQLite on a file: the key file beside the database. Without `current` it holds the key (made
   * on first start); with one, a key file left there is read as a previous key.
   */
  keyFile?: string;
}

export const MASTER_KEY_FLAGS = {
  'master-key-file': { type: 'string' },
  'previous-master-key-file': { type: 'string' },
} as const;

export const POSTGRES_NEEDS_A_KEY =
  'PostgreSQL needs a master key to encrypt endpoint secrets, the same key for every linkhooks-sender ' +
  'process. Generate one once with: openssl rand -base64 32\n' +
  'Keep it with your other secrets and give it to every process as LINKHOOKS_MASTER_KEY, or in a file ' +
  'only its owner can read, named by --master-key-file (or LINKHOOKS_MASTER_KEY_FILE).';

function keyOf(
  values: Record<string, unknown>,
  env: Env,
  flag: string,
  variable: string,
): KeyRef | undefined {
  const path = values[flag] as string | undefined;
  if (path === '') throw new UsageError(`--${flag} needs the path of a file holding the key`);
  if (path !== undefined) return { kind: 'file', source: `--${flag}`, path };
  const text = env[variable] || undefined;
  const file = env[`${variable}_FILE`] || undefined;
  if (text !== undefined && file !== undefined) {
    throw new UsageError(`set ${variable} or ${variable}_FILE, not both`);
  }
  if (file !== undefined) return { kind: 'file', source: `${variable}_FILE`, path: file };
  return text === undefined ? undefined : { kind: 'value', source: variable, text };
}

/**
 * @example
 * masterKeysOf({}, {}, 'sqlite:./data/linkhooks.db');
 * // { previous: [], keyFile: './data/linkhooks.db.master-key' }
 */
export function masterKeysOf(values: Record<string, unknown>, env: Env, db: string): MasterKeySettings {
  const current = keyOf(values, env, 'master-key-file', 'LINKHOOKS_MASTER_KEY');
  const previous = keyOf(values, env, 'previous-master-key-file', 'LINKHOOKS_PREVIOUS_MASTER_KEY');
  const file = sqliteFileOf(db);
  if (file === undefined && current === undefined) throw new UsageError(POSTGRES_NEEDS_A_KEY);
  return {
    ...(current ? { current } : {}),
    previous: previous ? [previous] : [],
    ...(file !== undefined && !isInMemory(file) ? { keyFile: `${file}.master-key` } : {}),
  };
}
