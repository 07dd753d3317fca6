/** What the memory store reports when it had to forget keys before their TTL. */
export interface MemoryStoreWarning {
  code: 'evicted_before_ttl';
  message: string;
  /** Keys evicted before their TTL since the store was created. */
  evictedBeforeTtl: number;
}

/** At most one warning a minute while a store keeps evicting: a burst is one warning, not one per key. */
export const EVICTION_WARNING_INTERVAL_MS = 60_000;

export function evictionWarning(maxEntries: number, evictedBeforeTtl: number): MemoryStoreWarning {
  return {
    code: 'evicted_before_ttl',
    evictedBeforeTtl,
    message:
      `linkhooks: the memory idempotency store is full (${maxEntries} keys) and has forgotten ` +
      `${evictedBeforeTtl} key(s) before their TTL, so a retry of those deliveries would run its ` +
      'handler again. Raise maxEntries, or share a Redis store (createRedisStore).',
  };
}

/** The default: a Node process warning where there is one (visible with `--trace-warnings`), else the console. */
export function emitWarning(warning: MemoryStoreWarning): void {
  const proc = (globalThis as { process?: { emitWarning?: (m: string, o: object) => void } }).process;
  if (typeof proc?.emitWarning === 'function') {
    proc.emitWarning(warning.message, { type: 'LinkhooksWarning', code: 'LINKHOOKS_EVICTED_BEFORE_TTL' });
  } else {
    console.warn(warning.message);
  }
}
