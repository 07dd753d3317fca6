/** Recovering an endpoint's failed deliveries (design D35): how much one call does and counts. */

/** Failed deliveries one recovery call re-queues at most; the answer says how many remain. */
export const RECOVER_BATCH = 1_000;
/**
 * How far the answer counts what remains: 100 calls' worth, ten minutes of an account's recoveries
 * at 10 a minute. A count reads an index entry a delivery, so past it a call would cost more to
 * count than to recover.
 */
export const REMAINING_COUNTED_AT_MOST = 100 * RECOVER_BATCH;
