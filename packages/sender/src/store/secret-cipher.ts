/**
 * Endpoint secrets at rest: AES-256-GCM under the operator's master key (design D18, D29). A copy
 * of the database alone then cannot sign a delivery. The endpoint id is the additional
 * authenticated data, so a ciphertext moved to another endpoint's row fails to decrypt instead of
 * handing that endpoint someone else's secret.
 *
 * Stored form: `lhenc:v2:<key id>:<base64url(iv | ciphertext | tag)>`. The key id names the master
 * key, so during a rotation each secret is opened with the key it was sealed with (design D30);
 * `lhenc:v1:` secrets, written before key ids, are still read by trying each key.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { SenderError } from '../errors.js';

const V1 = 'lhenc:v1:';
const V2 = 'lhenc:v2:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * The master key from its text form: 32 bytes as 64 hex characters, or as base64 / base64url.
 * The message of a refusal never repeats the input (it is a secret).
 *
 * @example
 * const key = parseMasterKey(process.env.LINKHOOKS_MASTER_KEY!); // openssl rand -base64 32
 */
export function parseMasterKey(text: string, name = 'LINKHOOKS_MASTER_KEY'): Buffer {
  const trimmed = text.trim();
  let key: Buffer | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) key = Buffer.from(trimmed, 'hex');
  else if (/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(trimmed)) key = Buffer.from(trimmed, 'base64');
  if (key?.length !== 32) {
    throw new SenderError(
      'invalid_option',
      `${name} must be 32 bytes written as 64 hex characters or as base64 (generate one with: openssl rand -base64 32)`,
    );
  }
  return key;
}

/**
 * A short public name of a master key: 8 hex characters of a SHA-256 of it. It tells keys apart
 * and reveals nothing of a 256-bit key.
 *
 * @example
 * keyId(parseMasterKey(process.env.LINKHOOKS_MASTER_KEY!)); // '3fa2c01b'
 */
export function keyId(key: Buffer): string {
  return createHash('sha256').update('linkhooks master key id\n').update(key).digest('hex').slice(0, 8);
}

export function isEncryptedSecret(value: string): boolean {
  return value.startsWith(V1) || value.startsWith(V2);
}

/** The master keys: `current` seals; `previous` ones are still accepted while a rotation runs. */
export interface MasterKeys {
  current: Buffer;
  previous?: readonly Buffer[];
}

export interface SecretCipher {
  encrypt(plain: string, endpointId: string): string;
  /** Refuses a plaintext secret once a key is set: it was never sealed (design D29). */
  decrypt(stored: string, endpointId: string): string;
  /** How every secret sealed under the current key begins; null without a key. */
  readonly sealedPrefix: string | null;
}

const mismatch = (why: string) =>
  new SenderError(
    'master_key_mismatch',
    `an endpoint secret cannot be decrypted: ${why}. Set LINKHOOKS_MASTER_KEY to the key it was encrypted with (during a rotation, the old key as LINKHOOKS_PREVIOUS_MASTER_KEY)`,
  );

/** Opened secrets a cipher keeps: far more endpoints than a claim window holds. */
const OPENED_SECRETS_KEPT = 4096;

function open(key: Buffer, raw: Buffer, endpointId: string): string {
  if (raw.length < IV_BYTES + TAG_BYTES) throw new Error('too short');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(endpointId, 'utf8'));
  decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
  return Buffer.concat([
    decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)),
    decipher.final(),
  ]).toString('utf8');
}

/**
 * @example
 * const cipher = createSecretCipher({ current: newKey, previous: [oldKey] });
 */
export function createSecretCipher(keys: MasterKeys | Buffer): SecretCipher {
  const { current, previous = [] } = Buffer.isBuffer(keys) ? { current: keys } : keys;
  const all = [current, ...previous];
  if (all.some((k) => k.length !== 32))
    throw new SenderError('invalid_option', 'a master key must be 32 bytes');
  const byId = new Map(all.map((k) => [keyId(k), k] as const));
  const sealedPrefix = `${V2}${keyId(current)}:`;
  // Every claimed delivery carries its endpoint's sealed secret: opening it each time was ~3% of
  // the service's time delivering. Keyed by the sealed text with the endpoint it is bound to, so a
  // rotated secret (new text) is opened afresh; bounded, least recently used dropped first (a
  // replaced or deleted endpoint's secret stays in memory until it is dropped).
  const opened = new Map<string, string>();
  const decryptOnce = (stored: string, endpointId: string): string => {
    const key = `${endpointId}\n${stored}`;
    const known = opened.get(key);
    if (known !== undefined) {
      opened.delete(key);
      opened.set(key, known);
      return known;
    }
    const plain = decryptStored(stored, endpointId);
    if (opened.size >= OPENED_SECRETS_KEPT) opened.delete(opened.keys().next().value!);
    opened.set(key, plain);
    return plain;
  };
  function decryptStored(stored: string, endpointId: string): string {
    if (stored.startsWith(V2)) {
      const id = stored.slice(V2.length, V2.length + 8);
      const key = byId.get(id);
      if (!key || stored[V2.length + 8] !== ':')
        throw mismatch(`it was encrypted with another master key (id ${id})`);
      try {
        return open(key, Buffer.from(stored.slice(V2.length + 9), 'base64url'), endpointId);
      } catch {
        throw mismatch('it is damaged or belongs to another endpoint');
      }
    }
    if (stored.startsWith(V1)) {
      const raw = Buffer.from(stored.slice(V1.length), 'base64url');
      for (const key of all) {
        try {
          return open(key, raw, endpointId);
        } catch {
          // the next key, if any
        }
      }
      throw mismatch('no configured master key opens it');
    }
    throw new SenderError(
      'secret_not_encrypted',
      'an endpoint secret is stored unencrypted although a master key is set; the service encrypts such secrets when it starts (or run: linkhooks-sender rotate-master-key)',
    );
  }
  return {
    sealedPrefix,
    encrypt(plain, endpointId) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', current, iv);
      cipher.setAAD(Buffer.from(endpointId, 'utf8'));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return sealedPrefix + Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
    },
    decrypt: decryptOnce,
  };
}

/** Without a master key, an encrypted secret must not be used as if it were the secret itself. */
export const noSecretCipher: SecretCipher = {
  sealedPrefix: null,
  encrypt: (plain) => plain,
  decrypt(stored) {
    if (isEncryptedSecret(stored)) {
      throw new SenderError(
        'master_key_missing',
        'endpoint secrets are encrypted at rest: set LINKHOOKS_MASTER_KEY to the key they were encrypted with',
      );
    }
    return stored;
  },
};
