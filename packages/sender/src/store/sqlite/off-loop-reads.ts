/**
 * Reads whose cost grows with what the store holds, run off the event loop (design D80): a worker
 * thread with a read-only connection of its own runs each, in a snapshot of its own, while the loop
 * goes on serving requests and deliveries. With a million deliveries queued, the count behind a
 * `/metrics` scrape took 140 ms on the loop. The thread starts with the first read and stays.
 * Should it fail (it could not start, load the driver or open the file), the reads waiting on it
 * and every later one run on the loop, as all did before: slower for the others, never lost. A
 * database kept in memory has no file another connection could open: its reads run on the loop.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { SenderError } from '../../errors.js';
import type { Row } from '../rows.js';
import type { SqliteDb } from './database.js';

// The thread's whole program: the connection, its statements prepared once and kept while it runs
// (no object of the driver's left to the collector: database.ts), each message's reads run in one
// read transaction, so they see one snapshot, and answered together.
const PROGRAM = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.filename, { readonly: true, fileMustExist: true });
db.exec('PRAGMA busy_timeout = 5000');
const statements = new Map();
const run = ({ sql, params, all }) => {
  let statement = statements.get(sql);
  if (!statement) statements.set(sql, (statement = db.prepare(sql)));
  const args = params === undefined ? [] : [params];
  return all ? statement.all(...args) : statement.get(...args);
};
const snapshot = db.transaction((reads) => reads.map(run));
parentPort.on('message', (message) => {
  if (message === 'stop') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    parentPort.postMessage({ id: message.id, results: snapshot.deferred(message.reads) });
  } catch (error) {
    parentPort.postMessage({ id: message.id, error: String(error && error.message ? error.message : error) });
  }
});
`;

/** A read-only statement with its named parameters: its first row, or (`all`) every row. */
export interface Read {
  sql: string;
  params?: Record<string, unknown>;
  all?: boolean;
}

export interface OffLoopReads {
  /** The first row of `sql`, a read-only statement, with its named `params`. */
  get(sql: string, params?: Record<string, unknown>): Promise<Row | undefined>;
  /** Each read's answer (a row or undefined, or `all`'s rows), in order, all from one snapshot. */
  snapshot(reads: Read[]): Promise<unknown[]>;
  /** Stops the thread; reads still waiting fail. */
  close(): Promise<void>;
}

type Waiting = { reads: Read[]; resolve: (results: unknown[]) => void; reject: (error: unknown) => void };

const runOn = (db: SqliteDb, { sql, params, all }: Read): unknown => {
  const args = params === undefined ? [] : [params];
  return all ? db.st(sql).all(...args) : db.st(sql).get(...args);
};

export function offLoopReads(db: SqliteDb): OffLoopReads {
  const onLoop = db.reading((reads: Read[]) => reads.map((read) => runOn(db, read)));
  let thread: Worker | null = null;
  let exited: Promise<void> = Promise.resolve();
  let closed = false;
  /** Reads run on the loop: the thread failed, or there is no file for it to open. */
  let failed = db.inMemory;
  let next = 0;
  const waiting = new Map<number, Waiting>();

  /** The reads the thread did not answer, on the loop (or refused, once the store is closed). */
  const onLoopAll = () => {
    const left = [...waiting.values()];
    waiting.clear();
    for (const w of left) {
      if (closed) w.reject(new SenderError('internal', 'the store is closed'));
      else {
        try {
          w.resolve(onLoop(w.reads));
        } catch (error) {
          w.reject(error);
        }
      }
    }
  };

  function start(): Worker {
    const worker = new Worker(PROGRAM, {
      eval: true,
      workerData: { driver: createRequire(import.meta.url).resolve('better-sqlite3'), filename: db.file },
    });
    worker.unref(); // referenced only while a read waits (get), so it never keeps a process alive
    worker.on('message', (message: { id: number; results?: unknown[]; error?: string }) => {
      const w = waiting.get(message.id);
      if (!w) return;
      waiting.delete(message.id);
      if (waiting.size === 0) worker.unref();
      if (message.error === undefined) w.resolve(message.results ?? []);
      else w.reject(new SenderError('internal', `a read of the database failed: ${message.error}`));
    });
    worker.once('error', () => {}); // its exit follows
    exited = new Promise((resolve) => {
      worker.once('exit', () => {
        if (thread === worker) thread = null;
        if (!closed) failed = true;
        onLoopAll();
        resolve();
      });
    });
    return worker;
  }

  const snapshot = (reads: Read[]): Promise<unknown[]> => {
    if (closed) return Promise.reject(new SenderError('internal', 'the store is closed'));
    if (failed) return Promise.resolve().then(() => onLoop(reads));
    try {
      thread ??= start();
    } catch {
      failed = true;
      return Promise.resolve().then(() => onLoop(reads));
    }
    const worker = thread;
    const id = next++;
    return new Promise((resolve, reject) => {
      waiting.set(id, { reads, resolve, reject });
      worker.ref();
      worker.postMessage({ id, reads });
    });
  };

  return {
    get: async (sql, params) =>
      (await snapshot([{ sql, ...(params ? { params } : {}) }]))[0] as Row | undefined,
    snapshot,
    async close() {
      closed = true;
      if (!thread) return;
      thread.ref();
      thread.postMessage('stop');
      await exited;
    },
  };
}
