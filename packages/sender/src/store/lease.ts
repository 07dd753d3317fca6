/** A random lease token: who holds a claimed delivery (DESIGN invariant 3). */
export function newLeaseToken(): string {
  const bytes = new Uint8Array(12);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
