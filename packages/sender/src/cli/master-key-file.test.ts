import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseMasterKey } from '../store/secret-cipher.js';
import { keyFileOf, readKeyFile } from './master-key-file.js';
import { masterKeysFor, rotationOf } from './master-keys.js';

const dir = mkdtempSync(join(tmpdir(), 'linkhooks-key-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const quiet = () => {
  const said: string[] = [];
  return { said, say: { info: (m: string) => said.push(m), warn: (m: string) => said.push(`warn: ${m}`) } };
};

describe('the key file beside the database (design D29)', () => {
  it.skipIf(process.platform === 'win32')('is made owner-only on first use, and reused after', () => {
    const path = join(dir, 'nested', 'linkhooks.db.master-key');
    const first = keyFileOf(path, () => {});
    expect(first.created).toBe(true);
    expect(parseMasterKey(first.key)).toHaveLength(32);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const again = keyFileOf(path, () => {});
    expect(again).toEqual({ key: first.key, created: false });
    // No temporary file is left behind.
    expect(readdirSync(join(dir, 'nested'))).toEqual(['linkhooks.db.master-key']);
  });

  it('agrees on the key another start made first: one key, made once', () => {
    const path = join(dir, 'race.master-key');
    const keys = [0, 1, 2, 3].map(() => keyFileOf(path, () => {}));
    expect(new Set(keys.map((k) => k.key)).size).toBe(1);
    expect(keys.filter((k) => k.created)).toHaveLength(1);
  });

  it('warns when others can read a key file, without printing the key', () => {
    const path = join(dir, 'shared.key');
    const key = Buffer.alloc(32, 7).toString('base64');
    writeFileSync(path, `${key}\n`);
    chmodSync(path, 0o644);
    const warnings: string[] = [];
    expect(readKeyFile(path, '--master-key-file', (m) => warnings.push(m))).toBe(key);
    expect(warnings.join()).toMatch(/can be read by other users of this machine \(mode 644\).*chmod 600/);
    expect(warnings.join()).not.toContain(key);
  });

  it('refuses a missing file or one without a key, without repeating what it holds', () => {
    expect(() => readKeyFile(join(dir, 'nowhere'), '--master-key-file', () => {})).toThrow(
      /--master-key-file: cannot read the master key file .*nowhere \(no such file\)/,
    );
    const path = join(dir, 'bad.key');
    writeFileSync(path, 'not-a-key-at-all', { mode: 0o600 });
    let message = '';
    try {
      readKeyFile(path, '--master-key-file', () => {});
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/32 bytes .*openssl rand -base64 32/);
    expect(message).not.toContain('not-a-key-at-all');
  });
});

describe('the keys a command runs with (design D29, D30)', () => {
  it('reads a key file left beside the database as a previous key once a key is given', () => {
    const keyFile = join(dir, 'given.db.master-key');
    const left = keyFileOf(keyFile, () => {}).key;
    const given = Buffer.alloc(32, 1).toString('base64');
    const { say, said } = quiet();
    const keys = masterKeysFor(
      { current: { kind: 'value', source: 'LINKHOOKS_MASTER_KEY', text: given }, previous: [], keyFile },
      say,
    );
    expect(keys).toEqual({ masterKey: given, previousMasterKeys: [left] });
    expect(said.join()).toContain(keyFile);
    expect(said.join()).not.toContain(left);
  });

  it('rotates the key file: a new key beside it, moved into place only when finished', () => {
    const keyFile = join(dir, 'rotate.db.master-key');
    const old = keyFileOf(keyFile, () => {}).key;
    const rotation = rotationOf({ previous: [], keyFile }, quiet().say);
    expect(rotation.previousMasterKeys).toEqual([old]);
    expect(rotation.masterKey).not.toBe(old);
    // Cut short here: a start reads both keys and says the rotation is unfinished.
    const { say, said } = quiet();
    expect(masterKeysFor({ previous: [], keyFile }, say)).toEqual({
      masterKey: old,
      previousMasterKeys: [rotation.masterKey],
    });
    expect(said.join()).toMatch(/rotate-master-key again/);
    // Run again, it reuses the new key it made.
    expect(rotationOf({ previous: [], keyFile }, quiet().say).masterKey).toBe(rotation.masterKey);
    rotation.finish();
    expect(readFileSync(keyFile, 'utf8').trim()).toBe(rotation.masterKey);
    expect(masterKeysFor({ previous: [], keyFile }, quiet().say).previousMasterKeys).toEqual([]);
  });
});
