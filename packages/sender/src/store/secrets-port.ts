/**
 * The part of the store port that seals endpoint secrets, and a rotation's previous secrets, under
 * the master key (design D29, D30, D38); `SenderStore` extends it (port.ts).
 */

/** An endpoint's secret as stored, and the value to store in its place. */
export interface SecretChange {
  id: string;
  /** The stored value the change was computed from: the row is left alone if it changed since. */
  from: string;
  to: string;
  /** The same for a rotation's previous secret (design D38), compared and set with the secret. */
  previous?: { from: string; to: string };
}

/**
 * Endpoint secrets across accounts, for sealing them under the master key in bounded steps
 * (design D29, D30): never for the API, which is scoped to one account.
 */
export interface SecretsAtRest {
  /**
   * Up to `limit` endpoints, by id after `after`, whose stored secret, or previous secret (design
   * D38), does not begin with `prefix`; `previousSecret` is there when the endpoint has one.
   */
  secretsNotSealedWith(
    prefix: string,
    after: string | null,
    limit: number,
  ): Promise<{ id: string; secret: string; previousSecret?: string }[]>;
  /**
   * Writes each change in one transaction where the secret is still `from` (compare-and-set), so
   * two processes sealing at once, or a rotation through the API, never lose a secret. Answers the
   * ids written.
   */
  replaceSecrets(changes: readonly SecretChange[]): Promise<string[]>;
}
