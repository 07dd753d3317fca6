/**
 * How many due rows a claim reads per call (SQLite SELECT_DUE, PostgreSQL CLAIM_DUE): enough for a full
 * batch when several endpoints share the front of the queue, few enough that a claim stays cheap
 * however long the backlog. Fewer than `limit` may come back; the next claim continues.
 */
export const claimWindow = (limit: number, cap: number): number => Math.max(limit * 4, cap * 8, 64);
