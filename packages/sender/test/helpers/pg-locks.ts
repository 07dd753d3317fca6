/**
 * Holding PostgreSQL locks in tests: a transaction on a second connection, and a wait until the
 * store's own connections are blocked by it. PostgreSQL reports lock waits nowhere a client could
 * subscribe to, so the wait reads pg_blocking_pids every few milliseconds.
 *
 * @example
 * await inTransaction(admin, schema, async (tx) => { …; const p = store.publish(…); await blockedBy(admin, tx, APP); … });
 */
import type pg from 'pg';

/**
 * Resolves once `n` connections named `applicationName` (the store's `applicationName`) wait for a
 * lock that `blocker` holds.
 */
export async function blockedBy(
  admin: pg.Pool,
  blocker: pg.PoolClient,
  applicationName: string,
  n = 1,
): Promise<void> {
  const { rows: own } = await blocker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  for (;;) {
    const { rows } = await admin.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE application_name = $1 AND $2::int = ANY (pg_blocking_pids(pid))`,
      [applicationName, own[0]!.pid],
    );
    if (rows[0]!.n >= n) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * `run` on a second connection, in a transaction on `schema` that it commits or rolls back
 * itself; whatever it leaves open is rolled back before the connection goes back to the pool.
 * Resolves with what `run` resolves with.
 */
export async function inTransaction<T>(
  admin: pg.Pool,
  schema: string,
  run: (tx: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const tx = await admin.connect();
  try {
    await tx.query('BEGIN');
    await tx.query(`SET LOCAL search_path = "${schema}"`);
    return await run(tx);
  } finally {
    await tx.query('ROLLBACK').catch(() => undefined);
    tx.release();
  }
}

/**
 * Runs `cycle` (a lock cycle between the store and the test's own transaction) until the store's
 * side is the deadlock victim. PostgreSQL checks a waiting backend once, `deadlock_timeout` (1 s)
 * after its wait began: the store waits first, so its check finds the cycle, unless the test's own
 * wait began more than that later (a loaded machine); then the test's check finds it and aborts
 * the test's transaction, and the cycle is set up again on fresh rows. `cycle` resolves with
 * false when its own transaction was the victim (see `closesCycle`).
 */
export async function untilStoreIsVictim(cycle: () => Promise<boolean>, tries = 5): Promise<void> {
  for (let i = 0; i < tries; i++) if (await cycle()) return;
  throw new Error(`the test's own transaction was the deadlock victim ${tries} times in a row`);
}

/**
 * The test's statement that closes a lock cycle: resolves with true once it ran (the other side
 * was the victim), with false when PostgreSQL aborted it as the victim.
 */
export const closesCycle = (statement: Promise<unknown>): Promise<boolean> =>
  statement.then(
    () => true,
    (error: { code?: string }) => {
      if (error.code !== '40P01') throw error;
      return false;
    },
  );
