/**
 * The delivery path's writes on SQLite (publishes, claims, attempt records, lease renewals and
 * releases) queued together: what arrives within one turn of the event loop is written in one
 * `BEGIN IMMEDIATE` transaction, one commit, and at most FLUSH_BUDGET_MS of the loop per turn for
 * all of them (design D58). A claim made as attempts finish shares its commit with their records,
 * and the loop is held for one budget per turn, not one per kind of write. The batching itself is
 * createBatcher's: a flush that ran out of budget answers a prefix, and the rest waits a turn, as do
 * the writes past MAX_WRITES when more are queued.
 */

import { createBatcher, type Settled } from '../batcher.js';
import type { EndpointRecord } from '../records.js';
import type { SqliteDb } from './database.js';
import { settleDue } from './endpoint-due.js';

/**
 * What one transaction's writes share: each account's endpoints, read once by its publishes, and
 * the endpoints whose next due times its attempts leave to settle.
 */
export interface TxMemo {
  /** The account's endpoints: `read` the first time in the transaction, the same list after. */
  endpointsOf(accountId: string, read: (accountId: string) => EndpointRecord[]): EndpointRecord[];
  /** A write changed an endpoint of the account: the next publish reads them again. */
  endpointsChanged(accountId: string): void;
  /**
   * The endpoint's next due time is to be settled at `now` (endpoint-due.ts): once its writes are
   * all done, once per endpoint however many of its attempts the transaction records, at the
   * latest `now`. Each settle reads the endpoint's queued deliveries: settling after each attempt
   * made the store's CPU per delivery 1.02 to 1.08 times what it is (bench/store-cycle.mjs --sqlite).
   */
  settleDue(endpointId: string, now: number): void;
}

function createTxMemo(db: SqliteDb) {
  const byAccount = new Map<string, EndpointRecord[]>();
  const unsettled = new Map<string, number>();
  const memo: TxMemo = {
    endpointsOf(accountId, read) {
      let endpoints = byAccount.get(accountId);
      if (!endpoints) {
        endpoints = read(accountId);
        byAccount.set(accountId, endpoints);
      }
      return endpoints;
    },
    endpointsChanged: (accountId) => byAccount.delete(accountId),
    settleDue(endpointId, now) {
      unsettled.set(endpointId, Math.max(now, unsettled.get(endpointId) ?? now));
    },
  };
  /**
   * After the transaction's writes, before its commit: each settle reads what they all left, so an
   * entry stays a lower bound whatever a later write made due.
   */
  const settle = () => {
    for (const [endpointId, now] of unsettled) settleDue(db, endpointId, now);
  };
  return { memo, settle };
}

/** A write of the queue: runs inside the transaction; throwing rolls it back, see `createWriteQueue`. */
export type Write<R> = (memo: TxMemo) => R;

/** A write's answer, with the number of the commit that holds it (to wait on with WalSync.durable). */
export type Written<R> = { value: R; commit: number };

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
 * `afterCommit` answers the number of the commit just made, above the last one's
 * (WalSync.committed, or a count of its own). `clock` reads the time the budget is counted in, in
 * milliseconds (a test stops it to keep a turn's writes in one transaction however slow the
 * machine).
 *
 * A write that throws fails alone: the transaction is rolled back, the writes before it are written
 * again without it, and the ones after it go into the next transaction. No savepoint per write (two
 * statements each) in the usual case where none throws. A failed BEGIN or COMMIT fails every write
 * of the transaction, as does a failed settle of the next due times (TxMemo.settleDue): those run
 * with the commit, after the budget's writes, one per endpoint recorded.
 *
 * @example
 * const write = createWriteQueue(db, () => wal.committed());
 * const { value } = await write(() => db.st(SQL).run(...));
 */
export function createWriteQueue(
  db: SqliteDb,
  afterCommit: () => number,
  clock: () => number = () => performance.now(),
) {
  // The budget is checked after each write: at least one is written, however long it takes.
  const transaction = db.immediate((writes: Write<unknown>[]): unknown[] => {
    const { memo, settle } = createTxMemo(db);
    const until = clock() + FLUSH_BUDGET_MS;
    const values: unknown[] = [];
    for (const write of writes) {
      try {
        values.push(write(memo));
      } catch (error) {
        throw new WriteFailed(values.length, error);
      }
      if (clock() >= until) break;
    }
    settle();
    return values;
  });

  /** Outcomes of a prefix of `writes` (at least one), in order. */
  const settle = (writes: Write<unknown>[]): Settled<unknown>[] => {
    try {
      return transaction(writes).map((value) => ({ ok: true, value }));
    } catch (error) {
      if (!(error instanceof WriteFailed)) return writes.map(() => ({ ok: false, error }));
      const before = error.index > 0 ? settle(writes.slice(0, error.index)) : [];
      return before.length < error.index ? before : [...before, { ok: false, error: error.cause }];
    }
  };

  const written = (writes: Write<unknown>[]): Settled<Written<unknown>>[] => {
    const outcomes = settle(writes);
    const commit = afterCommit();
    return outcomes.map((o) => (o.ok ? { ok: true, value: { value: o.value, commit } } : o));
  };

  const queue = createBatcher((writes: Write<unknown>[]) => {
    // The checkpoints' thread is catching up (design D58): the writes wait, the event loop does not.
    const held = db.held();
    return held ? held.then(() => written(writes)) : written(writes);
  }, MAX_WRITES);

  return <R>(write: Write<R>) => queue(write) as Promise<Written<R>>;
}

export type WriteQueue = ReturnType<typeof createWriteQueue>;
