import { describe, expect, it } from 'vitest';
import { masterKeysOf, POSTGRES_NEEDS_A_KEY } from './master-key-options.js';
import { parseCommand } from './options.js';

const PG = 'postgres://linkhooks@db:5432/linkhooks';
const KEY = 'k'.repeat(43);

describe('masterKeysOf (design D29)', () => {
  it('uses the key file beside a SQLite database when no key is given', () => {
    expect(masterKeysOf({}, {}, 'sqlite:./data/linkhooks.db')).toEqual({
      previous: [],
      keyFile: './data/linkhooks.db.master-key',
    });
    expect(masterKeysOf({}, {}, 'sqlite::memory:')).toEqual({ previous: [] });
  });

  it('refuses PostgreSQL without a key, saying how to make one', () => {
    expect(() => masterKeysOf({}, {}, PG)).toThrow(POSTGRES_NEEDS_A_KEY);
    expect(POSTGRES_NEEDS_A_KEY).toMatch(/openssl rand -base64 32/);
    expect(POSTGRES_NEEDS_A_KEY).not.toMatch(/design [DR]\d/);
    // A previous key alone is not a key to encrypt with.
    expect(() => masterKeysOf({}, { LINKHOOKS_PREVIOUS_MASTER_KEY: KEY }, PG)).toThrow(/needs a master key/);
    expect(() => masterKeysOf({}, { LINKHOOKS_MASTER_KEY: '' }, PG)).toThrow(/needs a master key/);
  });

  it('takes the key from the flag, the variable or the variable file; the flag wins', () => {
    expect(masterKeysOf({}, { LINKHOOKS_MASTER_KEY: KEY }, PG).current).toEqual({
      kind: 'value',
      source: 'LINKHOOKS_MASTER_KEY',
      text: KEY,
    });
    expect(masterKeysOf({}, { LINKHOOKS_MASTER_KEY_FILE: '/k' }, PG).current).toEqual({
      kind: 'file',
      source: 'LINKHOOKS_MASTER_KEY_FILE',
      path: '/k',
    });
    const both = masterKeysOf(
      { 'master-key-file': '/flag', 'previous-master-key-file': '/old' },
      { LINKHOOKS_MASTER_KEY: KEY },
      'sqlite:/d/x.db',
    );
    expect(both).toEqual({
      current: { kind: 'file', source: '--master-key-file', path: '/flag' },
      previous: [{ kind: 'file', source: '--previous-master-key-file', path: '/old' }],
      keyFile: '/d/x.db.master-key',
    });
  });

  it('refuses a key given twice in the environment, and an empty file flag', () => {
    expect(() =>
      masterKeysOf({}, { LINKHOOKS_MASTER_KEY: KEY, LINKHOOKS_MASTER_KEY_FILE: '/k' }, PG),
    ).toThrow(/set LINKHOOKS_MASTER_KEY or LINKHOOKS_MASTER_KEY_FILE, not both/);
    expect(() =>
      masterKeysOf(
        {},
        {
          LINKHOOKS_MASTER_KEY: KEY,
          LINKHOOKS_PREVIOUS_MASTER_KEY: KEY,
          LINKHOOKS_PREVIOUS_MASTER_KEY_FILE: '/k',
        },
        PG,
      ),
    ).toThrow(/LINKHOOKS_PREVIOUS_MASTER_KEY_FILE, not both/);
    expect(() => masterKeysOf({ 'master-key-file': '' }, {}, PG)).toThrow(/--master-key-file needs the path/);
  });

  it('is part of serve, worker and rotate-master-key, and a usage error there', () => {
    expect(() => parseCommand(['serve', '--db', PG], {})).toThrow(/needs a master key/);
    expect(() => parseCommand(['worker', '--db', PG], {})).toThrow(/needs a master key/);
    const rotate = parseCommand(['rotate-master-key', '--db', PG, '--master-key-file', '/k'], {});
    expect(rotate).toMatchObject({ kind: 'rotate-master-key', keys: { current: { path: '/k' } } });
    expect(parseCommand(['migrate', '--db', PG], {})).toEqual({ kind: 'migrate', db: PG });
  });
});
