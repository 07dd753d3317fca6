import {
  EVICTION_WARNING_INTERVAL_MS,
  emitWarning,
  evictionWarning,
  type MemoryStoreWarning,
} from './eviction-warning.js';
import type { ClaimResult, IdempotencyStore } from './store.js';

export type { MemoryStoreWarning } from './eviction-warning.js';

export interface MemoryStoreOptions {
  /**
   * Most keys kept. Default 1,000,000: a day of a busy click stream (about 100 MB). Past it the
   * key closest to its expiry is forgotten early, counted and warned about.
   */
  maxEntries?: number;
  /** Told when keys are forgotten before their TTL; at most once a minute. Default: a process warning. */
  onWarning?: (warning: MemoryStoreWarning) => void;
  /** Clock in epoch ms; injected by tests. */
  now?: () => number;
}

export interface MemoryStoreStats {
  /** Keys held, expired ones not yet dropped included. */
  size: number;
  maxEntries: number;
  /** Keys forgotten before their TTL because the store was full; each could run a handler twice. */
  evictedBeforeTtl: number;
}

export interface MemoryIdempotencyStore extends IdempotencyStore {
  readonly size: number;
  stats(): MemoryStoreStats;
}

// A completed key is only its expiry: no token is checked once a key is done, and a number is
// far smaller than an object at a million keys.
type Entry = number | { token: string; expiresAt: number };
type Queue = Map<string, Entry>;

const expiryOf = (entry: Entry) => (typeof entry === 'number' ? entry : entry.expiresAt);

/**
 * An idempotency store in this process's memory that keeps every key for its whole TTL, up to
 * `maxEntries`. Right for one long-running process; several processes or replicas, restarts, or
 * more keys than the budget need a shared store such as `createRedisStore`.
 *
 * @example
 * const store = createMemoryStore();
 * app.post('/webhooks', webhookMiddleware({ secret, on, idempotency: { store } }));
 * store.stats().evictedBeforeTtl; // 0 while the budget holds
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): MemoryIdempotencyStore {
  const maxEntries = options.maxEntries ?? 1_000_000;
  if (!Number.isInteger(maxEntries) || maxEntries < 1)
    throw new RangeError(`linkhooks: maxEntries must be a whole number above 0, got ${String(maxEntries)}`);
  const now = options.now ?? Date.now;
  const onWarning = options.onWarning ?? emitWarning;

  // One queue per TTL, each in write order: within a queue that is also expiry order, so expired
  // keys are dropped from the heads without scanning.
  const queues = new Map<number, Queue>();
  let size = 0;
  let evictedBeforeTtl = 0;
  let lastWarnedAt: number | undefined;

  const find = (key: string): { queue: Queue; entry: Entry } | undefined => {
    for (const queue of queues.values()) {
      const entry = queue.get(key);
      if (entry !== undefined) return { queue, entry };
    }
    return undefined;
  };

  // An emptied queue stays until the next write's sweep drops it.
  const remove = (queue: Queue, key: string) => {
    if (queue.delete(key)) size--;
  };

  const live = (key: string): Entry | undefined => {
    const found = find(key);
    if (!found) return undefined;
    if (expiryOf(found.entry) <= now()) {
      remove(found.queue, key);
      return undefined;
    }
    return found.entry;
  };

  const dropExpired = (at: number) => {
    for (const [ttl, queue] of queues) {
      for (const [key, entry] of queue) {
        if (expiryOf(entry) > at) break;
        remove(queue, key);
      }
      if (queue.size === 0) queues.delete(ttl);
    }
  };

  // Over budget: forget the key with the least time left, the one whose promise ends soonest.
  // A completed key goes first: forgetting a running handler's claim would let a redelivery run
  // it a second time at once, while a completed one can only be repeated later.
  const evictOne = (at: number) => {
    let victim: { queue: Queue; key: string; expiresAt: number; running: boolean } | undefined;
    for (const queue of queues.values()) {
      const head = queue.entries().next().value;
      if (!head) continue;
      const expiresAt = expiryOf(head[1]);
      const running = typeof head[1] !== 'number';
      const better =
        !victim ||
        (victim.running && !running) ||
        (victim.running === running && expiresAt < victim.expiresAt);
      if (better) victim = { queue, key: head[0], expiresAt, running };
    }
    if (!victim) return;
    remove(victim.queue, victim.key);
    evictedBeforeTtl++;
    if (lastWarnedAt === undefined || at - lastWarnedAt >= EVICTION_WARNING_INTERVAL_MS) {
      lastWarnedAt = at;
      try {
        onWarning(evictionWarning(maxEntries, evictedBeforeTtl));
      } catch {
        // A failing warning hook must not fail the delivery.
      }
    }
  };

  const set = (key: string, ttlMs: number, entry: (expiresAt: number) => Entry) => {
    const at = now();
    const found = find(key);
    if (found) remove(found.queue, key);
    dropExpired(at);
    while (size >= maxEntries) evictOne(at);
    let queue = queues.get(ttlMs);
    if (!queue) {
      queue = new Map();
      queues.set(ttlMs, queue);
    }
    queue.set(key, entry(at + ttlMs));
    size++;
  };

  return {
    get size() {
      return size;
    },
    stats: () => ({ size, maxEntries, evictedBeforeTtl }),
    async claim(key, token, ttlMs): Promise<ClaimResult> {
      const entry = live(key);
      if (entry !== undefined) return typeof entry === 'number' ? 'completed' : 'in_flight';
      set(key, ttlMs, (expiresAt) => ({ token, expiresAt }));
      return 'claimed';
    },
    async complete(key, token, ttlMs) {
      const entry = live(key);
      // Only the run holding the claim, or one whose claim lapsed, records the completion.
      if (entry !== undefined && (typeof entry === 'number' || entry.token !== token)) return;
      set(key, ttlMs, (expiresAt) => expiresAt);
    },
    async release(key, token) {
      const found = find(key);
      const entry = found?.entry;
      if (entry !== undefined && typeof entry !== 'number' && entry.token === token) {
        remove(found!.queue, key);
      }
    },
  };
}
