/**
 * Waits for a pooled connection that end with the store's timeout. With every connection of a pool
 * out, a statement waits in the pool's queue; while the server is silent, those out are dropped
 * only after the timeout, and the queue then gets new connections that each take the timeout to
 * fail, so a request behind N others waited N / pool size times the timeout. Each wait now fails
 * once it is older than the timeout, the way a statement does (postgres/connection.ts), with
 * pg-pool's own message for a wait that ran out, which the API answers 503 (store/unavailable.ts).
 *
 * Only a wait that queues behind others is timed, and by the store's watchdog (`expire`), not by a
 * timer of its own: pg-pool's `connectionTimeoutMillis` sets one on every such wait. A wait that
 * ends is taken out of pg-pool's queue (its `_pendingQueue`, as its own timeout does), so a long
 * silence leaves no queue behind it, each entry holding its statement's values.
 */
import pg from 'pg';

type Done = (release?: unknown) => void;
type Callback = (error: Error | undefined, client: pg.PoolClient | undefined, done: Done) => void;

interface Wait {
  readonly since: number;
  /** What pg-pool's queue holds for it. */
  readonly queued: Callback;
  expire(): void;
}

/** pg-pool's message for a wait for a connection that ran out (store/unavailable.ts knows it). */
export const WAIT_EXPIRED = 'timeout exceeded when trying to connect';

const NOTHING_TO_RELEASE: Done = () => undefined;
/** The error of a wait that ran out, or that an ending pool will never serve. */
const waitExpired = () => new Error(WAIT_EXPIRED);

/** pg-pool's queue of waits; absent, should a later pg-pool keep it elsewhere. */
const queueOf = (pool: pg.Pool): { callback: Callback }[] | undefined => {
  const queue = (pool as unknown as { _pendingQueue?: unknown })._pendingQueue;
  return Array.isArray(queue) ? queue : undefined;
};

export function boundedWaits(timeoutMs: number) {
  // In the order they began: the oldest first.
  const waits = new Set<Wait>();
  const pools: pg.Pool[] = [];

  class WaitBoundedPool extends pg.Pool {
    readonly #max: number;

    constructor(config: pg.PoolConfig & { max: number }) {
      super(config);
      this.#max = config.max;
    }

    override connect(): Promise<pg.PoolClient>;
    override connect(callback: Callback): void;
    override connect(callback?: Callback): Promise<pg.PoolClient> | undefined {
      // Nothing to wait for: a new connection made at once (no idle one, and room: its making has
      // its own timeout), a free one not yet promised to a wait (the pool hands them out on its
      // next tick), or an ended pool, which refuses at once.
      const made = this.idleCount === 0 && this.totalCount < this.#max;
      if (made || this.idleCount > this.waitingCount || this.ending) {
        if (!callback) return super.connect();
        return void super.connect(callback);
      }
      if (!callback) {
        return new Promise((resolve, reject) =>
          this.connect((error, client) => (error ? reject(error) : resolve(client as pg.PoolClient))),
        );
      }
      let expired = false;
      const queued: Callback = (error, client, done) => {
        // Taken out of the queue when it expired; should the pool answer it all the same, its
        // connection goes straight back.
        if (expired) return void (client && done());
        waits.delete(wait);
        callback(error, client, done);
      };
      const wait: Wait = {
        since: performance.now(),
        queued,
        expire() {
          expired = true;
          callback(waitExpired(), undefined, NOTHING_TO_RELEASE);
        },
      };
      waits.add(wait);
      super.connect(queued);
    }
  }

  /** Takes the waits of `gone` out of each pool's queue, in one pass over it. */
  const dequeue = (gone: Set<Callback>) => {
    for (const pool of pools) {
      const queue = queueOf(pool);
      if (!queue) continue;
      let kept = 0;
      for (const item of queue) if (!gone.has(item.callback)) queue[kept++] = item;
      queue.length = kept;
    }
  };

  return {
    pool(config: pg.PoolConfig & { max: number }): pg.Pool {
      const pool = new WaitBoundedPool(config);
      pools.push(pool);
      return pool;
    },
    /** Fails every wait older than the timeout, at `now` (performance.now()). */
    expire(now: number): void {
      const expired: Wait[] = [];
      for (const wait of waits) {
        if (now - wait.since < timeoutMs) break;
        waits.delete(wait);
        expired.push(wait);
      }
      if (expired.length === 0) return;
      dequeue(new Set(expired.map((wait) => wait.queued)));
      for (const wait of expired) wait.expire();
    },
    /**
     * Fails every wait still queued, once the pools are ending: pg-pool's end answers none of
     * them, and gives no connection to any.
     */
    failQueued(): void {
      for (const pool of pools) {
        for (const item of queueOf(pool)?.splice(0) ?? []) {
          item.callback(waitExpired(), undefined, NOTHING_TO_RELEASE);
        }
      }
    },
  };
}
