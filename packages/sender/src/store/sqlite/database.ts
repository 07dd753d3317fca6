/**
 * One SQLite connection (better-sqlite3, WAL) with a statement cache, `BEGIN IMMEDIATE` write
 * transactions and deferred read ones: what every SQLite store operation runs on.
 *
 * No object of the driver's is left to the garbage collector while the connection is open:
 * statements are prepared once per connection and kept (`st`), settings are made with `exec` (no
 * statement object), and rows are read whole (`all`, `get`), never through an iterator. On Node.js
 * 24.19 and later, a better-sqlite3 12 object that the collector frees outside JavaScript can abort
 * the process (Node's object wrapper removes its cleanup hook and finds no environment): a claim's
 * cursor freed so stopped a service in its first burst on Node 24 under `--single-threaded-gc`.
 * better-sqlite3 13 wraps its objects with Node-API instead, but needs Node 22 or later.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { SenderError } from '../../errors.js';
import { type CheckpointEvents, createCheckpointer, WAL_LIMIT_FRAMES } from './checkpointer.js';
import { isInMemory } from './in-memory.js';
import { type StoreStatement, storeStatement } from './store-statement.js';

/**
 * The connection as the store's code sees it: the driver's own connection stays inside this file,
 * so the store's code has no way to prepare a statement for one use, iterate or call `pragma()`.
 */
export interface SqliteDb {
  /** The database's file, an absolute path, or `:memory:` or `''` for one kept in memory. */
  readonly file: string;
  /** Whether SQLite keeps the database in memory, with no file. */
  readonly inMemory: boolean;
  /**
   * The prepared statement for `sql`, prepared once per connection. Statements run for each
   * delivery take positional parameters: a named one costs a lookup per parameter (design D67).
   */
  st(sql: string): StoreStatement;
  /** Runs `sql`, one statement or several, with no statement object made (migrations, settings). */
  exec(sql: string): void;
  /**
   * `fn` as a `BEGIN IMMEDIATE` transaction: the write lock is taken first, so two processes on one
   * file never both read and then write.
   */
  immediate<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R;
  /** `fn` as a read transaction (a deferred `BEGIN`): its reads see one snapshot of the file. */
  reading<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R;
  /**
   * While the checkpoints' thread catches up with a WAL past its limit (design D58), a promise that
   * resolves when it has: the delivery path's writes (write-queue.ts) wait for it. Null the rest
   * of the time.
   */
  held(): Promise<void> | null;
  /** Closes the connection, and the checkpoints' thread first (design D57). */
  close(): Promise<void>;
}

/**
 * The named parameter as a LIMIT or OFFSET. SQLite plans with the value bound to a bare parameter
 * there, and prepares the statement again whenever that value changes: the claim's pages, whose
 * bounds move from claim to claim, were parsed and planned again and again (design D70). Added to
 * zero, the value is read as the statement runs, and the statement stays as it was prepared. A
 * parenthesised parameter, `(@name)`, is still a bare one to SQLite.
 */
export const countParam = (name: string) => `(@${name} + 0)`;

/** A parameter, parenthesised or not, not followed by countParam's `+ 0`. */
const PARAM = String.raw`\(*\s*(?:[@:$]\w+|\?\d*)(?!\w)(?!\s*\+)`;
/** A bare parameter as a LIMIT, an OFFSET, or the second number of `LIMIT a, b`. */
const BARE_BOUND = new RegExp(
  String.raw`\b(?:LIMIT|OFFSET)\s+${PARAM}|\bLIMIT\s+(?:\([^()]*\)|[\w@:$?]+)\s*,\s*${PARAM}`,
  // Upper case, as the store writes SQL: its TypeScript has `limit ? … : …`.
  'g',
);

/**
 * Each LIMIT or OFFSET of `sql` bound as a bare parameter, as written there: countParam's are not.
 * Exported for its test, which also scans the store's sources with it.
 */
export const bareBounds = (sql: string): string[] => [...sql.matchAll(BARE_BOUND)].map((m) => m[0]);

/**
 * The pages SQLite keeps in memory for the store's connection, in KiB (4,096 pages). No fewer: a
 * delivery's rows touch some ten indexes, and with SQLite's default 2 MiB their pages were evicted
 * and read back at each turn. No more: while the file is under 1 GiB, a commit after a b-tree
 * balance that renumbered pages walks every page in the cache (design D75), so a larger cache costs
 * more at those commits than its hits save.
 */
export const PAGE_CACHE_KIB = 16 * 1024;

/**
 * Opens `filename` (or `:memory:`), creating its folder; claims and records commit `NORMAL`.
 * `checkpoints`: told what the checkpoints' thread does (tests).
 */
export function openSqlite(filename: string, checkpoints: CheckpointEvents = {}): SqliteDb {
  const inMemory = isInMemory(filename);
  // Absolute: the checkpoints' thread and the WAL sync open the file by name, later, whatever the
  // process's working directory is by then.
  const file = inMemory ? filename : resolve(filename);
  if (!inMemory) mkdirSync(dirname(file), { recursive: true });
  const raw = new Database(file);
  raw.exec('PRAGMA journal_mode = WAL');
  raw.exec('PRAGMA synchronous = NORMAL');
  raw.exec('PRAGMA foreign_keys = ON');
  raw.exec('PRAGMA busy_timeout = 5000');
  // Deleted rows are overwritten with zeros, not left in free pages: a deleted endpoint's secret
  // or a pruned event's body is gone from the file, not just unlinked.
  raw.exec('PRAGMA secure_delete = ON');
  raw.exec(`PRAGMA cache_size = -${PAGE_CACHE_KIB}`);
  // A WAL that grew past its limit (design D58) is cut back to it when it starts over.
  raw.exec(`PRAGMA journal_size_limit = ${WAL_LIMIT_FRAMES * 4096}`);
  const cache = new Map<string, StoreStatement>();
  const checkpointer = createCheckpointer(raw, checkpoints);
  return {
    file,
    inMemory,
    st(sql) {
      let s = cache.get(sql);
      if (!s) {
        // Checked once per statement, as it is prepared: SQL built at run time (the log's pages)
        // included.
        const bare = bareBounds(sql);
        if (bare.length > 0) {
          throw new SenderError(
            'internal',
            `the statement binds ${bare.map((b) => `"${b}"`).join(', ')} as a bare parameter; write it with countParam: ${sql}`,
          );
        }
        s = storeStatement(raw.prepare(sql));
        cache.set(sql, s);
      }
      return s;
    },
    exec(sql) {
      raw.exec(sql);
    },
    reading(fn) {
      const tx = raw.transaction(fn);
      return (...args) => tx.deferred(...args);
    },
    immediate(fn) {
      const tx = raw.transaction(fn);
      return (...args) => {
        const result = tx.immediate(...args);
        checkpointer.committed();
        return result;
      };
    },
    held: () => checkpointer.held(),
    async close() {
      await checkpointer.stop();
      raw.close();
    },
  };
}
