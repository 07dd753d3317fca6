/**
 * The most rows one step of a long deletion (retention, an endpoint's or an account's deletion)
 * takes on SQLite, whatever the step was asked for: a SQLite step runs on the event loop, and a
 * thousand deliveries (their indexes, zeroed by secure_delete) held it some 35 ms at a million
 * rows. A hundred hold it about 3 ms and cost no more per row (bench part `scale`: loop p99 during
 * a prune 49 ms → 7 ms).
 */
export const SQLITE_STEP_ROWS = 100;

/** The rows a step asked for `limit` takes. */
export const sqliteStepRows = (limit: number) => Math.min(limit, SQLITE_STEP_ROWS);
