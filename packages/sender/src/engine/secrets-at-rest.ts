/**
 * The engine's master keys (design D29, D30, D31): the cipher endpoint secrets are sealed with, and
 * a warning when a library user runs without one.
 */
import type { Logger } from 'pino';
import { SenderError } from '../errors.js';
import {
  createSecretCipher,
  noSecretCipher,
  parseMasterKey,
  type SecretCipher,
} from '../store/secret-cipher.js';

export function secretCipherOf(
  options: { masterKey?: string; previousMasterKeys?: readonly string[] },
  logger: Logger,
): SecretCipher {
  if (!options.masterKey) {
    if (options.previousMasterKeys?.length) {
      throw new SenderError(
        'invalid_option',
        'a previous master key is given without a current one (LINKHOOKS_MASTER_KEY): set the key to encrypt with',
      );
    }
    // Allowed for tests and trials (design D31), but never silently.
    logger.warn(
      'no masterKey: endpoint secrets are stored unencrypted; pass masterKey to encrypt them at rest',
    );
    return noSecretCipher;
  }
  return createSecretCipher({
    current: parseMasterKey(options.masterKey),
    previous: (options.previousMasterKeys ?? []).map((k) =>
      parseMasterKey(k, 'LINKHOOKS_PREVIOUS_MASTER_KEY'),
    ),
  });
}
