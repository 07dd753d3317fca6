/**
 * Every attempt inserts a lease and deletes it: the table holds a few rows but leaves a dead one per
 * attempt, which every claim's in-flight count would read through until autovacuum comes by (once a
 * minute at best; at a few thousand attempts a second, hundreds of pages). Each process vacuums it
 * after every VACUUM_LEASES_EVERY leases it ended, in the background (SKIP_LOCKED: never waiting on
 * another process's vacuum); none hands the table's end pages back (migration 13). A role that
 * does not own the table gets a warning from PostgreSQL and autovacuum alone.
 */
import { createBackgroundPass } from './background-pass.js';
import type { Pg } from './connection.js';

/** Leases ended (recorded or released) by one process between two vacuums of `leases`. */
export const VACUUM_LEASES_EVERY = 1000;

/** Outside any transaction (VACUUM cannot run in one). */
const VACUUM_LEASES = `VACUUM (SKIP_LOCKED) leases`;

export interface LeaseVacuum {
  /** Counts `n` ended leases; starts a vacuum in the background once enough have ended. */
  ended(n: number): void;
  /** Stops vacuuming and waits for a vacuum under way. */
  stop(): Promise<void>;
}

export function createLeaseVacuum(pg: Pg): LeaseVacuum {
  let endedSinceVacuum = 0;
  const vacuum = createBackgroundPass(); // a vacuum that fails: the next one will try again
  return {
    ended(n) {
      endedSinceVacuum += n;
      // Counted on while a vacuum is under way: the next end after it starts another.
      if (endedSinceVacuum >= VACUUM_LEASES_EVERY && vacuum.start(() => pg.pool.query(VACUUM_LEASES))) {
        endedSinceVacuum = 0;
      }
    },
    stop: () => vacuum.stop(),
  };
}
