import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { newId } from '../domain/ids.js';
import { withSecretCipher } from '../store/encrypted-secrets.js';
import type { SenderStore } from '../store/port.js';
import { createSecretCipher, keyId, noSecretCipher } from '../store/secret-cipher.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import { sealSecrets } from './seal-secrets.js';

const oldKey = randomBytes(32);
const newKey = randomBytes(32);
const opened: SenderStore[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function database() {
  const dir = mkdtempSync(join(tmpdir(), 'linkhooks-seal-'));
  dirs.push(dir);
  const file = join(dir, 'seal.db');
  const open = async () => {
    const store = createSqliteStore({ filename: file });
    await store.migrate();
    opened.push(store);
    return store;
  };
  return { open, store: await open() };
}

/** `n` endpoints written through `cipher` (plaintext with noSecretCipher); answers id → secret. */
async function endpoints(store: SenderStore, n: number, cipher = noSecretCipher) {
  const secrets = new Map<string, string>();
  const sealing = withSecretCipher(store, cipher);
  for (let i = 0; i < n; i++) {
    const secret = `whsec_${randomBytes(8).toString('hex')}`;
    const e = await sealing.createEndpoint({
      id: newId('ep'),
      accountId: `acct_${i % 3}`,
      url: 'https://receiver.example.com/hook',
      events: ['click'],
      secret,
      description: null,
      now: 1,
    });
    secrets.set(e.id, secret);
  }
  return secrets;
}

async function storedSecrets(store: SenderStore) {
  return new Map((await store.secretsNotSealedWith('\u0000', null, 10_000)).map((r) => [r.id, r.secret]));
}

describe('sealSecrets (design D29)', () => {
  it('encrypts every plaintext secret in bounded batches, and then finds nothing to do', async () => {
    const { store } = await database();
    const secrets = await endpoints(store, 10);
    const limits: number[] = [];
    const counted: SenderStore = {
      ...store,
      secretsNotSealedWith: (prefix, after, limit) => {
        limits.push(limit);
        return store.secretsNotSealedWith(prefix, after, limit);
      },
    };
    const cipher = createSecretCipher(newKey);
    expect(await sealSecrets(counted, cipher, 3)).toEqual({ sealed: 10, resealed: 0, unreadable: [] });
    expect(limits).toEqual([3, 3, 3, 3]);
    const stored = await storedSecrets(store);
    for (const [id, secret] of secrets) {
      expect(stored.get(id)!.startsWith(`lhenc:v2:${keyId(newKey)}:`)).toBe(true);
      expect(stored.get(id)).not.toContain(secret);
      expect(cipher.decrypt(stored.get(id)!, id)).toBe(secret);
    }
    expect(await sealSecrets(store, cipher, 3)).toEqual({ sealed: 0, resealed: 0, unreadable: [] });
  });

  it('is safe from two processes at once: every secret sealed once, none lost', async () => {
    const { store, open } = await database();
    const secrets = await endpoints(store, 40);
    const other = await open();
    const cipher = createSecretCipher(newKey);
    const [one, two] = await Promise.all([sealSecrets(store, cipher, 4), sealSecrets(other, cipher, 4)]);
    expect(one.sealed + two.sealed).toBe(40);
    const stored = await storedSecrets(store);
    for (const [id, secret] of secrets) expect(cipher.decrypt(stored.get(id)!, id)).toBe(secret);
  });

  it('moves secrets under a previous key to the current one, and reports what no key opens', async () => {
    const { store } = await database();
    const underOld = await endpoints(store, 4, createSecretCipher(oldKey));
    const lost = await endpoints(store, 1, createSecretCipher(randomBytes(32)));
    const rotating = createSecretCipher({ current: newKey, previous: [oldKey] });
    const report = await sealSecrets(store, rotating, 2);
    expect(report).toEqual({ sealed: 0, resealed: 4, unreadable: [...lost.keys()] });
    const onlyNew = createSecretCipher(newKey);
    const stored = await storedSecrets(store);
    for (const [id, secret] of underOld) expect(onlyNew.decrypt(stored.get(id)!, id)).toBe(secret);
  });

  it("moves a rotation's previous secret with its secret, and one alone when only it is behind (design D38)", async () => {
    const { store } = await database();
    const underOld = withSecretCipher(store, createSecretCipher(oldKey));
    const [id] = [...(await endpoints(store, 1, createSecretCipher(oldKey))).keys()];
    await underOld.updateEndpoint(
      'acct_0',
      id!,
      { secret: 'whsec_second', previousSecretExpiresAt: 10 ** 13 },
      2,
    );
    const [first] = [...(await endpoints(store, 1, createSecretCipher(newKey))).keys()];
    // An endpoint rotated under the new key while its previous secret is still under the old one.
    await store.updateEndpoint('acct_0', first!, { previousSecretExpiresAt: null }, 3);
    const rotating = createSecretCipher({ current: newKey, previous: [oldKey] });
    await withSecretCipher(store, rotating).updateEndpoint(
      'acct_0',
      first!,
      { secret: 'whsec_third', previousSecretExpiresAt: 10 ** 13 },
      4,
    );
    const raw = (await store.listEndpoints('acct_0')).find((e) => e.id === first)!;
    await store.replaceSecrets([
      {
        id: first!,
        from: raw.secret,
        to: raw.secret,
        previous: { from: raw.previousSecret!, to: createSecretCipher(oldKey).encrypt('whsec_kept', first!) },
      },
    ]);

    expect(await sealSecrets(store, rotating, 1)).toEqual({ sealed: 0, resealed: 1, unreadable: [] });
    const onlyNew = withSecretCipher(store, createSecretCipher(newKey));
    expect(await onlyNew.getEndpoint('acct_0', id!)).toMatchObject({ secret: 'whsec_second' });
    expect((await onlyNew.getEndpoint('acct_0', id!))?.previousSecret).toMatch(/^whsec_/);
    expect(await onlyNew.getEndpoint('acct_0', first!)).toMatchObject({
      secret: 'whsec_third',
      previousSecret: 'whsec_kept',
    });
    expect(await store.secretsNotSealedWith(`lhenc:v2:${keyId(newKey)}:`, null, 10)).toEqual([]);
  });

  it('does nothing without a key', async () => {
    const { store } = await database();
    await endpoints(store, 2);
    expect(await sealSecrets(store, noSecretCipher)).toEqual({ sealed: 0, resealed: 0, unreadable: [] });
  });
});
