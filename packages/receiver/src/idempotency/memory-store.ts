import type { ClaimResult, IdempotencyStore } from './store.js';

export interface MemoryStoreOptions {
  /** Most keys kept; the oldest are evicted first. Default 10,000. */
  maxEntries?: number;
  /** Clock in epoch ms; injected by tests. */
  now?: () => number;
}

interface Entry {
  state: 'in_flight' | 'completed';
  token: string;
  expiresAt: number;
}

/**
 * An idempotency store in this process's memory: bounded and with TTLs. Right for one process;
 * several processes or machines need a shared store such as `createRedisStore`.
 *
 * @example
 * const store = createMemoryStore({ maxEntries: 50_000 });
 * app.post('/webhooks', webhookMiddleware({ secret, on, idempotency: { store } }));
 */
export function createMemoryStore(
  options: MemoryStoreOptions = {},
): IdempotencyStore & { readonly size: number } {
  const maxEntries = options.maxEntries ?? 10_000;
  if (!Number.isInteger(maxEntries) || maxEntries < 1)
    throw new RangeError('maxEntries must be a positive integer');
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();

  const live = (key: string): Entry | undefined => {
    const entry = entries.get(key);
    if (entry && entry.expiresAt <= now()) {
      entries.delete(key);
      return undefined;
    }
    return entry;
  };

  // Map keeps insertion order, and every write re-inserts, so the first key is the stalest.
  const set = (key: string, entry: Entry) => {
    entries.delete(key);
    entries.set(key, entry);
    while (entries.size > maxEntries) entries.delete(entries.keys().next().value as string);
  };

  return {
    get size() {
      return entries.size;
    },
    async claim(key, token, ttlMs): Promise<ClaimResult> {
      const entry = live(key);
      if (entry) return entry.state;
      set(key, { state: 'in_flight', token, expiresAt: now() + ttlMs });
      return 'claimed';
    },
    async complete(key, token, ttlMs) {
      const entry = live(key);
      if (entry && entry.token !== token) return;
      set(key, { state: 'completed', token, expiresAt: now() + ttlMs });
    },
    async release(key, token) {
      const entry = live(key);
      if (entry?.state === 'in_flight' && entry.token === token) entries.delete(key);
    },
  };
}
