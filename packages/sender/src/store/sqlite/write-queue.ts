/**
 * The delivery path's writes on SQLite (publishes, claims, attempt records, lease renewals and
 * releases) queued together: what
 * arrives within one turn of the event loop is written in one `BEGIN IMMEDIATE` transaction, one
 * commit, and at most FLUSH_BUDGET_MS of the loop per turn for all of them (design D58). A claim
 * made as attempts finish shares its commit with their records, and the loop is held for one
 * budget per turn, not one per kind of write.
 */
import type { SqliteDb } from './database.js';

/** What one transaction's writes share: reads they may keep for its length (the endpoints of an account). */
export type TxMemo = Map<string, unknown>;

/** A write of the queue: runs inside the transaction; throwing rolls it back, see `createWriteQueue`. */
export type Write<R> = (memo: TxMemo) => R;

/** A write's answer, with the number of the commit that holds it (to wait on with WalSync.durable). */
export type Written<R> = { value: R; commit: number };

type Queued = { write: Write<unknown>; resolve: (w: Written<unknown>) => void; reject: (e: unknown) => void };

/** The write at `index` threw `cause`: the transaction is rolled back. */
class WriteFailed extends Error {
  constructor(
    readonly index: number,
    override readonly cause: unknown,
  ) {
    super('a write of the transaction failed');
  }
}

/**
 * How long one transaction may hold the event loop: a turn's 256 clicks to eight endpoints each
 * write some 2,300 rows, tens of milliseconds every other request would wait for.
 */
export const FLUSH_BUDGET_MS = 5;

/** The most writes one transaction takes: bounds the work queued behind a slow one. */
const MAX_WRITES = 512;

/**
 * `afterCommit` answers the number of the commit just made (WalSync.committed, or 0).
 *
 * A write that throws fails alone: the transaction is rolled back, the writes before it are written
 * again without it, and the ones after it go into the next transaction. No savepoint per write (two
 * statements each) in the usual case where none throws. A failed BEGIN or COMMIT fails every write
 * of the transaction.
 *
 * @example
 * const write = createWriteQueue(db, () => wal?.committed() ?? 0);
 * const { value } = await write(() => db.st(SQL).run(...));
 */
export function createWriteQueue(db: SqliteDb, afterCommit: () => number) {
  const queue: Queued[] = [];
  let scheduled = false;

  // The budget is checked after each write: at least one is written, however long it takes.
  const transaction = db.immediate((writes: Queued[]): unknown[] => {
    const memo: TxMemo = new Map();
    const until = performance.now() + FLUSH_BUDGET_MS;
    const values: unknown[] = [];
    for (const w of writes) {
      try {
        values.push(w.write(memo));
      } catch (error) {
        throw new WriteFailed(values.length, error);
      }
      if (performance.now() >= until) break;
    }
    return values;
  });

  type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };
  /** Outcomes of a prefix of `writes` (at least one), in order. */
  const settle = (writes: Queued[]): Outcome[] => {
    try {
      return transaction(writes).map((value) => ({ ok: true, value }));
    } catch (error) {
      if (!(error instanceof WriteFailed)) return writes.map(() => ({ ok: false, error }));
      const before = error.index > 0 ? settle(writes.slice(0, error.index)) : [];
      return before.length < error.index ? before : [...before, { ok: false, error: error.cause }];
    }
  };

  function flush() {
    // The checkpoints' thread is catching up (design D58): the writes wait, the event loop does not.
    const held = db.held();
    if (held) {
      void held.then(flush);
      return;
    }
    scheduled = false;
    const writes = queue.splice(0, MAX_WRITES);
    const outcomes = settle(writes);
    const commit = afterCommit();
    for (const [i, o] of outcomes.entries()) {
      const w = writes[i] as Queued;
      if (o.ok) w.resolve({ value: o.value, commit });
      else w.reject(o.error);
    }
    // What the budget left goes first into the next transaction, after a turn of the loop in which
    // the requests waiting on it are served.
    queue.unshift(...writes.slice(outcomes.length));
    schedule();
  }

  function schedule() {
    if (scheduled || queue.length === 0) return;
    scheduled = true;
    setImmediate(flush);
  }

  return <R>(write: Write<R>): Promise<Written<R>> =>
    new Promise((resolve, reject) => {
      queue.push({ write, resolve: resolve as Queued['resolve'], reject });
      schedule();
    });
}

export type WriteQueue = ReturnType<typeof createWriteQueue>;
