import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { newId } from '../domain/ids.js';
import { withSecretCipher } from './encrypted-secrets.js';
import { createSecretCipher, keyId, noSecretCipher, parseMasterKey } from './secret-cipher.js';
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
    expect(rowSecret(created.id)).toMatch(new RegExp(`^lhenc:v2:${keyId(key)}:`));
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
    // A breaker's probe (its lease run out) is opened as a claim is.
    const [probe] = await store.claimProbes({ now: 60_010, leaseMs: 60_000, endpointIds: [created.id] });
    expect(probe!.secret).toBe('whsec_second');
    await raw.close();
  });

  it('uses a fresh IV each time and binds the ciphertext to its endpoint', () => {
    const cipher = createSecretCipher(key);
    const one = cipher.encrypt('whsec_same', 'ep_1');
    expect(cipher.encrypt('whsec_same', 'ep_1')).not.toBe(one);
    expect(cipher.decrypt(one, 'ep_1')).toBe('whsec_same');
    // Opened once, kept: still bound to its endpoint, and a changed text is opened afresh.
    expect(() => cipher.decrypt(one, 'ep_2')).toThrow(/cannot be decrypted/);
    const tampered = one.slice(0, -2) + (one.endsWith('A') ? 'BB' : 'AA');
    expect(() => cipher.decrypt(tampered, 'ep_1')).toThrow(/cannot be decrypted/);
    expect(cipher.decrypt(one, 'ep_1')).toBe('whsec_same');
    const rotated = cipher.encrypt('whsec_next', 'ep_1');
    expect(cipher.decrypt(rotated, 'ep_1')).toBe('whsec_next');
  });

  it('refuses a wrong key, and an encrypted secret when no key is set, rather than sign with ciphertext', async () => {
    const { raw } = await sqlite();
    const created = await withSecretCipher(raw, createSecretCipher(key)).createEndpoint(
      newEndpoint('acct_a', 'whsec_x'),
    );
    await expect(
      withSecretCipher(raw, createSecretCipher(randomBytes(32))).getEndpoint('acct_a', created.id),
    ).rejects.toMatchObject({ code: 'master_key_mismatch', message: /another master key/ });
    await expect(
      withSecretCipher(raw, noSecretCipher).getEndpoint('acct_a', created.id),
    ).rejects.toMatchObject({
      code: 'master_key_missing',
      message: /set LINKHOOKS_MASTER_KEY/,
    });
    await raw.close();
  });

  it('refuses a secret stored unencrypted once a key is set, with a stable code (design D29)', async () => {
    const { raw, rowSecret } = await sqlite();
    const plain = await raw.createEndpoint(newEndpoint('acct_a', 'whsec_old'));
    expect(rowSecret(plain.id)).toBe('whsec_old');
    const store = withSecretCipher(raw, createSecretCipher(key));
    const refused = await store.getEndpoint('acct_a', plain.id).catch((e: unknown) => e);
    expect(refused).toMatchObject({ name: 'SenderError', code: 'secret_not_encrypted' });
    expect((refused as Error).message).not.toContain('whsec_old');
    await raw.close();
  });

  it('holds back only the delivery whose secret cannot be opened, and says which', async () => {
    const { raw } = await sqlite();
    const refusedIds: string[] = [];
    const store = withSecretCipher(raw, createSecretCipher(key), (id) => refusedIds.push(id));
    const sealed = await store.createEndpoint(newEndpoint('acct_a', 'whsec_sealed'));
    await raw.createEndpoint(newEndpoint('acct_a', 'whsec_plain'));
    const [, toPlain] = await store
      .publish(
        { id: newId('evt'), accountId: 'acct_a', name: 'click', body: Buffer.from('{}'), createdAt: 1 },
        () => newId('dlv'),
      )
      .then(({ deliveries: ds }) => [
        ds.find((d) => d.endpointId === sealed.id)!,
        ds.find((d) => d.endpointId !== sealed.id)!,
      ]);
    const request = { now: 10, limit: 10, leaseMs: 60_000, perEndpointCap: 8 };
    const claims = await store.claimDue(request);
    expect(claims.map((c) => c.secret)).toEqual(['whsec_sealed']);
    expect(refusedIds).toEqual([toPlain!.id]);
    // A turn's claim (design D77) the same way.
    const { deliveries } = await store.publish(
      { id: newId('evt'), accountId: 'acct_a', name: 'click', body: Buffer.from('{}'), createdAt: 2 },
      () => newId('dlv'),
    );
    const turn = await store.claimTurn({ ...request, after: '' });
    expect(turn.claimed.map((c) => c.secret)).toEqual(['whsec_sealed']);
    // The inner store's cursor, passed on as it is: past the account it took.
    expect(turn.next).toBe('acct_a');
    expect(refusedIds).toEqual([toPlain!.id, deliveries.find((d) => d.endpointId !== sealed.id)!.id]);
    await raw.close();
  });
});

describe('master key rotation (design D30)', () => {
  const oldKey = randomBytes(32);
  const newKey = randomBytes(32);

  it('names each key by a short id, and seals under the current one', () => {
    expect(keyId(oldKey)).toMatch(/^[0-9a-f]{8}$/);
    expect(keyId(oldKey)).not.toBe(keyId(newKey));
    const cipher = createSecretCipher({ current: newKey, previous: [oldKey] });
    expect(cipher.sealedPrefix).toBe(`lhenc:v2:${keyId(newKey)}:`);
    expect(cipher.encrypt('whsec_x', 'ep_1').startsWith(cipher.sealedPrefix!)).toBe(true);
  });

  it('opens secrets under the previous key while it is given, and not after', () => {
    const underOld = createSecretCipher(oldKey).encrypt('whsec_old', 'ep_1');
    expect(createSecretCipher({ current: newKey, previous: [oldKey] }).decrypt(underOld, 'ep_1')).toBe(
      'whsec_old',
    );
    expect(() => createSecretCipher(newKey).decrypt(underOld, 'ep_1')).toThrow(
      new RegExp(`another master key \\(id ${keyId(oldKey)}\\)`),
    );
  });

  it('opens secrets sealed under a key it only accepts, newer or older: the rotation without an outage', () => {
    // Step 1 of the runbook's rotation: every process accepts the new key, still sealing with the old.
    const learning = createSecretCipher({ current: oldKey, previous: [newKey] });
    // Step 2: a process restarted on the new key seals under it; step-1 processes open those.
    const moved = createSecretCipher({ current: newKey, previous: [oldKey] });
    expect(learning.decrypt(moved.encrypt('whsec_moved', 'ep_1'), 'ep_1')).toBe('whsec_moved');
    expect(moved.decrypt(learning.encrypt('whsec_kept', 'ep_2'), 'ep_2')).toBe('whsec_kept');
    // A process on the old key alone, as the rotation once ran, could not.
    expect(() => createSecretCipher(oldKey).decrypt(moved.encrypt('whsec_x', 'ep_3'), 'ep_3')).toThrow(
      /another master key/,
    );
  });

  it('still reads lhenc:v1: secrets, written before key ids, with whichever key opens them', () => {
    const v2 = createSecretCipher(oldKey).encrypt('whsec_v1', 'ep_1');
    const v1 = `lhenc:v1:${v2.slice(`lhenc:v2:${keyId(oldKey)}:`.length)}`;
    expect(createSecretCipher({ current: newKey, previous: [oldKey] }).decrypt(v1, 'ep_1')).toBe('whsec_v1');
    expect(() => createSecretCipher(newKey).decrypt(v1, 'ep_1')).toThrow(/no configured master key opens it/);
  });
});
