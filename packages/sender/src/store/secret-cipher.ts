/**
 * Endpoint secrets at rest: AES-256-GCM under the operator's LINKHOOKS_MASTER_KEY (design D18). A copy of the database alone then cannot sign a
 * delivery. The endpoint id is the additional authenticated data, so a ciphertext moved to another
 * endpoint's row fails to decrypt instead of handing that endpoint someone else's secret.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { SenderError } from '../errors.js';

const PREFIX = 'lhenc:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * The master key from its text form: 32 bytes as 64 hex characters, or as base64 / base64url.
 * The message of a refusal never repeats the input (it is a secret).
 *
 * @example
 * const key = parseMasterKey(process.env.LINKHOOKS_MASTER_KEY!); // openssl rand -base64 32
 */
export function parseMasterKey(text: string): Buffer {
  const trimmed = text.trim();
  let key: Buffer | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) key = Buffer.from(trimmed, 'hex');
  else if (/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(trimmed)) key = Buffer.from(trimmed, 'base64');
  if (key?.length !== 32) {
    throw new SenderError(
      'invalid_option',
      'LINKHOOKS_MASTER_KEY must be 32 bytes written as 64 hex characters or as base64 (generate one with: openssl rand -base64 32)',
    );
  }
  return key;
}

export function isEncryptedSecret(value: string): boolean {
  return value.startsWith(PREFIX);
}

export interface SecretCipher {
  encrypt(plain: string, endpointId: string): string;
  decrypt(stored: string, endpointId: string): string;
}

export function createSecretCipher(key: Buffer): SecretCipher {
  if (key.length !== 32) throw new SenderError('invalid_option', 'the master key must be 32 bytes');
  return {
    encrypt(plain, endpointId) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(endpointId, 'utf8'));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return PREFIX + Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
    },
    decrypt(stored, endpointId) {
      // A row written before the key was set stays readable; it is encrypted on its next rotation.
      if (!isEncryptedSecret(stored)) return stored;
      const raw = Buffer.from(stored.slice(PREFIX.length), 'base64url');
      try {
        if (raw.length < IV_BYTES + TAG_BYTES) throw new Error('too short');
        const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
        decipher.setAAD(Buffer.from(endpointId, 'utf8'));
        decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
        return Buffer.concat([
          decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)),
          decipher.final(),
        ]).toString('utf8');
      } catch {
        throw new SenderError(
          'invalid_option',
          'an endpoint secret cannot be decrypted: LINKHOOKS_MASTER_KEY is not the key it was encrypted with',
        );
      }
    },
  };
}

/** Without a master key, an encrypted secret must not be used as if it were the secret itself. */
export const noSecretCipher: SecretCipher = {
  encrypt: (plain) => plain,
  decrypt(stored) {
    if (isEncryptedSecret(stored)) {
      throw new SenderError(
        'invalid_option',
        'endpoint secrets are encrypted at rest: set LINKHOOKS_MASTER_KEY to the key they were encrypted with',
      );
    }
    return stored;
  },
};
