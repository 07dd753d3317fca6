import { pooledRandom } from '../domain/random-pool.js';

/** A random lease token, 24 hex digits: who holds a claimed delivery (design I3). */
export function newLeaseToken(): string {
  const bytes = pooledRandom(12);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/**
 * A lease (delivery id and token) as one string, to key sets and maps by lease rather than delivery.
 * Neither an id nor a token the stores make holds a space, so a key names one pair.
 */
export const leaseKey = (deliveryId: string, leaseToken: string): string => `${deliveryId} ${leaseToken}`;

/** leaseKey in SQL, of the columns (or expressions) `deliveryId` and `leaseToken`. */
export const leaseKeySql = (deliveryId: string, leaseToken: string): string =>
  `${deliveryId} || ' ' || ${leaseToken}`;
