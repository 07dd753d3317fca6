/**
 * Seals every endpoint secret under the current master key (design D29, D30): plaintext ones
 * (written before a key was set) are encrypted, and ones under a previous key are encrypted again
 * under the current one; a rotation's previous secret (design D38) likewise, with its secret. It walks the endpoints in bounded batches by id, each written in one
 * transaction with compare-and-set, so it is safe from several processes starting at once and
 * beside a rotation through the API. Values are never returned or logged: only counts and ids.
 */
import type { SecretChange, SecretsAtRest } from '../store/port.js';
import { isEncryptedSecret, type SecretCipher } from '../store/secret-cipher.js';

export interface SealReport {
  /** Plaintext secrets this call encrypted. */
  sealed: number;
  /** Secrets under a previous key this call encrypted again under the current one. */
  resealed: number;
  /** Endpoints whose secret no configured key opens; left as they are. */
  unreadable: string[];
}

export const SEAL_BATCH = 500;

/** What to store in place of one secret: a change, or why it cannot be made. Pure but for the IV. */
export function sealOne(
  row: { id: string; secret: string },
  cipher: SecretCipher,
): { change: SecretChange; plaintext: boolean } | { unreadable: true } {
  const plaintext = !isEncryptedSecret(row.secret);
  try {
    const plain = plaintext ? row.secret : cipher.decrypt(row.secret, row.id);
    return { change: { id: row.id, from: row.secret, to: cipher.encrypt(plain, row.id) }, plaintext };
  } catch {
    return { unreadable: true };
  }
}

/**
 * @example
 * const report = await sealSecrets(store, createSecretCipher({ current, previous: [old] }));
 * logger.info({ sealed: report.sealed, resealed: report.resealed }, 'endpoint secrets sealed');
 */
export async function sealSecrets(
  store: SecretsAtRest,
  cipher: SecretCipher,
  batch = SEAL_BATCH,
): Promise<SealReport> {
  const report: SealReport = { sealed: 0, resealed: 0, unreadable: [] };
  const prefix = cipher.sealedPrefix;
  if (prefix === null) return report; // no key: nothing to seal with
  let after: string | null = null;
  for (;;) {
    const rows = await store.secretsNotSealedWith(prefix, after, batch);
    if (rows.length === 0) return report;
    const changes: SecretChange[] = [];
    const plaintext = new Set<string>();
    const counted = new Set<string>();
    for (const row of rows) {
      // A secret already under the current key stays as it is: only its previous one moves.
      const decided = row.secret.startsWith(prefix)
        ? { change: { id: row.id, from: row.secret, to: row.secret }, plaintext: false }
        : sealOne(row, cipher);
      if ('unreadable' in decided) {
        report.unreadable.push(row.id);
        continue;
      }
      if (!row.secret.startsWith(prefix)) counted.add(row.id);
      if (decided.plaintext) plaintext.add(row.id);
      const previous = previousChange(row, prefix, cipher);
      changes.push(previous ? { ...decided.change, previous } : decided.change);
    }
    for (const id of await store.replaceSecrets(changes)) {
      if (!counted.has(id)) continue;
      if (plaintext.has(id)) report.sealed++;
      else report.resealed++;
    }
    after = rows[rows.length - 1]!.id;
    if (rows.length < batch) return report;
  }
}

/**
 * The change of a rotation's previous secret not under the current key, or undefined: none, or
 * already sealed, or no key opens it (it is then left as it is; it signs for at most 7 days).
 */
function previousChange(
  row: { id: string; previousSecret?: string },
  prefix: string,
  cipher: SecretCipher,
): { from: string; to: string } | undefined {
  if (row.previousSecret === undefined || row.previousSecret.startsWith(prefix)) return undefined;
  const decided = sealOne({ id: row.id, secret: row.previousSecret }, cipher);
  return 'unreadable' in decided ? undefined : { from: decided.change.from, to: decided.change.to };
}
