/**
 * How many due rows a claim reads per call (SQLite SELECT_DUE, PostgreSQL CLAIM_DUE): enough for a full
 * batch when several endpoints share the front of the queue, few enough that a claim stays cheap
 * however long the backlog. Fewer than `limit` may come back; the next claim continues.
 */
export const claimWindow = (limit: number, cap: number): number => Math.max(limit * 4, cap * 8, 64);

/**
 * How many due rows a claim walks at most to find its window: past that, what it walks is held by
 * deliveries it may not take now (their endpoint, account or origin at its limit), and it reads each
 * endpoint's own due deliveries instead. Under load a walk passes over about three rows for each it
 * takes, well inside this.
 */
export const claimWalk = (window: number): number => window * 8;
