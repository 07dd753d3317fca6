/**
 * HMAC-SHA256, the one primitive signing and verification need (design R9).
 *
 * There is a single implementation of everything around it (parsing, comparison, hints); only
 * the digest itself comes from `node:crypto` when the runtime has it (synchronous, fastest) or
 * from Web Crypto otherwise (edge runtimes: asynchronous). `node:crypto` is reached through
 * `process.getBuiltinModule`, never a static import, so bundles for Workers stay clean.
 */
import { toBytes, toHex } from './encoding.js';

type NodeHmac = {
  update(data: string | Uint8Array): NodeHmac;
  digest(): Uint8Array;
  digest(encoding: 'hex'): string;
};
interface NodeCryptoLike {
  createHmac(algorithm: 'sha256', key: string | Uint8Array): NodeHmac;
  timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean;
  createHash?(algorithm: 'sha256'): NodeHmac;
}

function loadNodeCrypto(): NodeCryptoLike | undefined {
  try {
    const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
    const mod = proc?.getBuiltinModule?.('node:crypto') as NodeCryptoLike | undefined;
    return mod && typeof mod.createHmac === 'function' ? mod : undefined;
  } catch {
    return undefined;
  }
}

const nodeCrypto = loadNodeCrypto();

/** Whether the synchronous (node:crypto) path is available in this runtime. */
export const hasSyncCrypto: boolean = nodeCrypto !== undefined;

/** Synchronous HMAC-SHA256, or `undefined` where the runtime offers only Web Crypto. */
export const hmacSha256Sync:
  | ((key: string | Uint8Array, data: string | Uint8Array) => Uint8Array)
  | undefined = nodeCrypto
  ? (key, data) => nodeCrypto.createHmac('sha256', key).update(data).digest()
  : undefined;

/**
 * {@link hmacSha256Sync} as lowercase hex, written by node:crypto itself: one string, where hex
 * made from the digest's bytes in JavaScript built one per byte (a signature per delivery).
 */
export const hmacSha256HexSync:
  | ((key: string | Uint8Array, data: string | Uint8Array) => string)
  | undefined = nodeCrypto
  ? (key, data) => nodeCrypto.createHmac('sha256', key).update(data).digest('hex')
  : undefined;

/** {@link hmacSha256Sync} over several parts in order, without concatenating them first. */
export const hmacSha256PartsSync:
  | ((key: string | Uint8Array, parts: readonly (string | Uint8Array)[]) => Uint8Array)
  | undefined = nodeCrypto
  ? (key, parts) => {
      const h = nodeCrypto.createHmac('sha256', key);
      for (const part of parts) h.update(part);
      return h.digest();
    }
  : undefined;

// Importing a raw key is the slow part of Web Crypto; keep the last few keys.
const KEY_CACHE_LIMIT = 16;
const webKeys = new Map<string, Promise<CryptoKey>>();

function webKey(raw: string | Uint8Array): Promise<CryptoKey> {
  // Byte keys (Standard Webhooks) and text keys (X-Service-Signature) never share a cache entry.
  const secret = typeof raw === 'string' ? `s:${raw}` : `b:${toHex(raw)}`;
  let key = webKeys.get(secret);
  if (!key) {
    key = globalThis.crypto.subtle.importKey(
      'raw',
      toBytes(raw) as BufferSource,
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    );
    if (webKeys.size >= KEY_CACHE_LIMIT) webKeys.delete(webKeys.keys().next().value as string);
    webKeys.set(secret, key);
    // A failed import must not stay cached for that secret.
    key.catch(() => webKeys.delete(secret));
  }
  return key;
}

/** HMAC-SHA256 that runs everywhere: node:crypto when present, Web Crypto otherwise. */
export async function hmacSha256(key: string | Uint8Array, data: string | Uint8Array): Promise<Uint8Array> {
  if (hmacSha256Sync) return hmacSha256Sync(key, data);
  const cryptoKey = await webKey(key);
  return new Uint8Array(
    await globalThis.crypto.subtle.sign('HMAC', cryptoKey, toBytes(data) as BufferSource),
  );
}

/**
 * Compares two byte arrays of the same length in time that does not depend on where they differ.
 * Callers guarantee equal lengths (both are 32-byte digests), so `timingSafeEqual` cannot throw.
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  if (nodeCrypto) return nodeCrypto.timingSafeEqual(a, b);
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

const nodeHash = nodeCrypto?.createHash
  ? (data: string | Uint8Array) => nodeCrypto.createHash!('sha256').update(data).digest()
  : undefined;

/** SHA-256 of `data`, on node:crypto or Web Crypto. */
export async function sha256(data: string | Uint8Array): Promise<Uint8Array> {
  if (nodeHash) return nodeHash(data);
  return new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', toBytes(data) as BufferSource));
}
