/** A random lease token: who holds a claimed delivery (design I3). */
export function newLeaseToken(): string {
  const bytes = new Uint8Array(12);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** A lease (delivery id and token) as one string, to key sets and maps by lease rather than delivery. */
export const leaseKey = (deliveryId: string, leaseToken: string): string => `${deliveryId} ${leaseToken}`;
