import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { newId } from '../domain/ids.js';
import { withSecretCipher } from './encrypted-secrets.js';
import { createSecretCipher, noSecretCipher, parseMasterKey } from './secret-cipher.js';
import { createSqliteStore } from './sqlite/sqlite-store.js';

const key = randomBytes(32);
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function sqlite() {
  const dir = mkdtempSync(join(tmpdir(), 'linkhooks-cipher-'));
  dirs.push(dir);
  const file = join(dir, 'secrets.db');
  const raw = createSqliteStore({ filename: file });
  await raw.migrate();
  const rowSecret = (id: string) => {
    const db = new Database(file, { readonly: true });
    const row = db.prepare('SELECT secret FROM endpoints WHERE id = ?').get(id) as { secret: string };
    db.close();
    return row.secret;
  };
  return { raw, rowSecret };
}

const newEndpoint = (accountId: string, secret: string) => ({
  id: newId('ep'),
  accountId,
  url: 'https://receiver.example.com/hook',
  events: ['click' as const],
  secret,
  description: null,
  now: 1,
});

describe('parseMasterKey', () => {
  it('takes 32 bytes as hex, base64 or base64url', () => {
    expect(parseMasterKey(key.toString('hex'))).toEqual(key);
    expect(parseMasterKey(key.toString('base64'))).toEqual(key);
    expect(parseMasterKey(key.toString('base64url'))).toEqual(key);
    expect(parseMasterKey(` ${key.toString('base64')}\n`)).toEqual(key);
  });

  it('refuses anything else without repeating it', () => {
    for (const bad of [
      randomBytes(31).toString('hex'),
      randomBytes(33).toString('base64'),
      randomBytes(31).toString('base64'),
      'correct horse battery staple',
      '',
    ]) {
      let message = '';
      try {
        parseMasterKey(bad);
      } catch (error) {
        message = (error as Error).message;
        expect((error as { code: string }).code).toBe('invalid_option');
      }
      expect(message).toMatch(/32 bytes/);
      if (bad) expect(message).not.toContain(bad);
    }
  });
});

describe('secrets encrypted at rest', () => {
  it('round-trips through create, get, list, update and claim, and the database holds only ciphertext', async () => {
    const { raw, rowSecret } = await sqlite();
    const store = withSecretCipher(raw, createSecretCipher(key));
    const created = await store.createEndpoint(newEndpoint('acct_a', 'whsec_first'));
    expect(created.secret).toBe('whsec_first');
    expect(rowSecret(created.id)).toMatch(/^lhenc:v1:/);
    expect(rowSecret(created.id)).not.toContain('whsec_first');
    expect((await store.getEndpoint('acct_a', created.id))!.secret).toBe('whsec_first');
    expect((await store.listEndpoints('acct_a'))[0]!.secret).toBe('whsec_first');
    const rotated = await store.updateEndpoint('acct_a', created.id, { secret: 'whsec_second' }, 2);
    expect(rotated!.secret).toBe('whsec_second');
    expect(rowSecret(created.id)).not.toContain('whsec_second');
    await store.publish(
      { id: newId('evt'), accountId: 'acct_a', name: 'click', body: Buffer.from('{}'), createdAt: 1 },
      () => newId('dlv'),
    );
    const [claim] = await store.claimDue({ now: 10, limit: 10, leaseMs: 60_000, perEndpointCap: 8 });
    expect(claim!.secret).toBe('whsec_second');
    await raw.close();
  });

  it('uses a fresh IV each time and binds the ciphertext to its endpoint', () => {
    const cipher = createSecretCipher(key);
    const one = cipher.encrypt('whsec_same', 'ep_1');
    expect(cipher.encrypt('whsec_same', 'ep_1')).not.toBe(one);
    expect(cipher.decrypt(one, 'ep_1')).toBe('whsec_same');
    expect(() => cipher.decrypt(one, 'ep_2')).toThrow(/cannot be decrypted/);
    const tampered = one.slice(0, -2) + (one.endsWith('A') ? 'BB' : 'AA');
    expect(() => cipher.decrypt(tampered, 'ep_1')).toThrow(/cannot be decrypted/);
  });

  it('refuses a wrong key, and an encrypted secret when no key is set, rather than sign with ciphertext', async () => {
    const { raw } = await sqlite();
    const created = await withSecretCipher(raw, createSecretCipher(key)).createEndpoint(
      newEndpoint('acct_a', 'whsec_x'),
    );
    await expect(
      withSecretCipher(raw, createSecretCipher(randomBytes(32))).getEndpoint('acct_a', created.id),
    ).rejects.toThrow(/not the key/);
    await expect(withSecretCipher(raw, noSecretCipher).getEndpoint('acct_a', created.id)).rejects.toThrow(
      /set LINKHOOKS_MASTER_KEY/,
    );
    await raw.close();
  });

  it('still reads secrets written before the key was set', async () => {
    const { raw, rowSecret } = await sqlite();
    const plain = await raw.createEndpoint(newEndpoint('acct_a', 'whsec_old'));
    expect(rowSecret(plain.id)).toBe('whsec_old');
    const store = withSecretCipher(raw, createSecretCipher(key));
    expect((await store.getEndpoint('acct_a', plain.id))!.secret).toBe('whsec_old');
    await raw.close();
  });
});
