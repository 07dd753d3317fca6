/**
 * A store decorator that keeps endpoint secrets encrypted at rest: secrets are encrypted on their
 * way in (create, rotate) and decrypted on their way out (every endpoint and every claim), so the
 * engine, the workers and the API only ever see plaintext while the database only ever holds
 * ciphertext. A rotation's previous secret is the replaced secret as stored, moved by the store
 * (design D38), so it stays ciphertext and is decrypted on the way out like the secret. Every
 * other method is the inner store's own; a plaintext secret read with a key set is refused
 * (design D29).
 */
import type { SenderStore } from './port.js';
import type { ClaimedDelivery, EndpointRecord } from './records.js';
import type { SecretCipher } from './secret-cipher.js';

/**
 * @example
 * const store = withSecretCipher(createSqliteStore({ filename }), createSecretCipher(parseMasterKey(key)));
 */
export function withSecretCipher(
  store: SenderStore,
  cipher: SecretCipher,
  onUnreadable: (deliveryId: string, error: unknown) => void = () => {},
): SenderStore {
  const openOrNullSecret = (stored: string | null, endpointId: string) =>
    stored === null ? null : cipher.decrypt(stored, endpointId);
  const open = (e: EndpointRecord): EndpointRecord => ({
    ...e,
    secret: cipher.decrypt(e.secret, e.id),
    previousSecret: openOrNullSecret(e.previousSecret, e.id),
  });
  const openOrNull = (e: EndpointRecord | null) => (e ? open(e) : null);
  // A secret the keys cannot open holds back its own delivery only: its lease is left to expire
  // (tried again then, by this or another process) and the rest of the batch goes out.
  const openClaims = (claims: ClaimedDelivery[]) => {
    const opened: ClaimedDelivery[] = [];
    for (const c of claims) {
      try {
        opened.push({
          ...c,
          secret: cipher.decrypt(c.secret, c.delivery.endpointId),
          previousSecret: openOrNullSecret(c.previousSecret, c.delivery.endpointId),
        });
      } catch (error) {
        onUnreadable(c.delivery.id, error);
      }
    }
    return opened;
  };
  return {
    ...store,
    async createEndpoint(input, admit) {
      return open(
        await store.createEndpoint({ ...input, secret: cipher.encrypt(input.secret, input.id) }, admit),
      );
    },
    async getEndpoint(accountId, id) {
      return openOrNull(await store.getEndpoint(accountId, id));
    },
    async listEndpoints(accountId) {
      return (await store.listEndpoints(accountId)).map(open);
    },
    async updateEndpoint(accountId, id, patch, now) {
      const sealed =
        patch.secret === undefined ? patch : { ...patch, secret: cipher.encrypt(patch.secret, id) };
      return openOrNull(await store.updateEndpoint(accountId, id, sealed, now));
    },
    async pauseEndpoint(accountId, id, now) {
      return openOrNull(await store.pauseEndpoint(accountId, id, now));
    },
    async resumeEndpoint(accountId, id, now) {
      const result = await store.resumeEndpoint(accountId, id, now);
      return result ? { ...result, endpoint: open(result.endpoint) } : null;
    },
    async reenableEndpoint(accountId, id, options) {
      const result = await store.reenableEndpoint(accountId, id, options);
      return result ? { ...result, endpoint: open(result.endpoint) } : null;
    },
    async recordAttempt(result) {
      const applied = await store.recordAttempt(result);
      return applied.disabledEndpoint
        ? { ...applied, disabledEndpoint: open(applied.disabledEndpoint) }
        : applied;
    },
    claimDue: async (request) => openClaims(await store.claimDue(request)),
    claimTurn: async (request) => {
      // The cursor counts a claim whose secret could not be opened: it stays leased until its
      // lease runs out, as taken as the others.
      const { claimed, next } = await store.claimTurn(request);
      return { claimed: openClaims(claimed), next };
    },
    claimProbes: async (request) => openClaims(await store.claimProbes(request)),
  };
}
