/**
 * Waits for a pooled connection that end with the store's timeout. With every connection of a pool
 * out, a statement waits in the pool's queue; while the server is silent, those out are dropped
 * only after the timeout, and the queue then gets new connections that each take the timeout to
 * fail, so a request behind N others waited N / pool size times the timeout. Each wait now fails
 * once it is older than the timeout, the way a statement does (postgres/connection.ts), with
 * pg-pool's own message for a wait that ran out, which the API answers 503 (store/unavailable.ts).
 *
 * Only a wait that queues is timed, and by the store's watchdog (`expire`), not by a timer of its
 * own: pg-pool's `connectionTimeoutMillis` sets one on every such wait.
 */
import pg from 'pg';

type Done = (release?: unknown) => void;
type Callback = (error: Error | undefined, client: pg.PoolClient | undefined, done: Done) => void;

interface Wait {
  readonly since: number;
  expire(): void;
}

/** pg-pool's message for a wait for a connection that ran out (store/unavailable.ts knows it). */
export const WAIT_EXPIRED = 'timeout exceeded when trying to connect';

const NOTHING_TO_RELEASE: Done = () => undefined;

export function boundedWaits(timeoutMs: number) {
  // In the order they began: the oldest first.
  const waits = new Set<Wait>();

  class WaitBoundedPool extends pg.Pool {
    readonly #max: number;

    constructor(config: pg.PoolConfig & { max: number }) {
      super(config);
      this.#max = config.max;
    }

    override connect(): Promise<pg.PoolClient>;
    override connect(callback: Callback): void;
    override connect(callback?: Callback): Promise<pg.PoolClient> | undefined {
      // A free connection not yet promised to a wait (the pool hands them out on its next tick),
      // room for a new one (its making has its own timeout), or an ended pool (which refuses at
      // once): nothing to wait for.
      if (this.idleCount > this.waitingCount || this.totalCount < this.#max || this.ending) {
        if (!callback) return super.connect();
        return void super.connect(callback);
      }
      if (!callback) {
        return new Promise((resolve, reject) =>
          this.connect((error, client) => (error ? reject(error) : resolve(client as pg.PoolClient))),
        );
      }
      let expired = false;
      const wait: Wait = {
        since: performance.now(),
        expire() {
          expired = true;
          callback(new Error(WAIT_EXPIRED), undefined, NOTHING_TO_RELEASE);
        },
      };
      waits.add(wait);
      super.connect((error, client, done) => {
        // An expired wait's connection goes straight back, to the next wait in the queue.
        if (expired) return void (client && done());
        waits.delete(wait);
        callback(error, client, done);
      });
    }
  }

  return {
    pool: (config: pg.PoolConfig & { max: number }): pg.Pool => new WaitBoundedPool(config),
    /** Fails every wait older than the timeout, at `now` (performance.now()). */
    expire(now: number): void {
      for (const wait of waits) {
        if (now - wait.since < timeoutMs) return;
        waits.delete(wait);
        wait.expire();
      }
    },
  };
}
