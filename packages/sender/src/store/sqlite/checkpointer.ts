/**
 * WAL checkpoints off the event loop (design D57). By default SQLite checkpoints inside the commit
 * that takes the WAL past 1,000 pages: that commit copies the frames into the database file and
 * syncs it, milliseconds to tens of milliseconds in which the process serves no request. Once a
 * store has committed a few hundred write transactions (a store serving load within a second; an
 * idle service's claims count too, so within minutes; a short-lived store such as a CLI command's
 * never), a worker thread with its own connection takes over: it checkpoints in PASSIVE mode (it
 * never waits for, nor holds up, the store's writes) every CHECKPOINT_EVERY_MS, and the store's
 * connection stops checkpointing at commit. Should the thread fail, the connection checkpoints at
 * commit again, as before.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/** Write transactions a store commits before its checkpoints move off the event loop. */
export const CHECKPOINTER_AFTER_COMMITS = 200;
export const CHECKPOINT_EVERY_MS = 100;
/** SQLite's own default: the connection checkpoints at commit past this many WAL pages. */
const AUTOCHECKPOINT_PAGES = 1000;

// The thread's whole program: one connection to the store's file (which must exist, in WAL mode), a
// PASSIVE checkpoint on a timer, closed on 'stop'. A checkpoint that fails ends the thread: the
// store's connection then checkpoints at commit again.
const PROGRAM = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.filename, { fileMustExist: true });
if (db.pragma('journal_mode', { simple: true }) !== 'wal') throw new Error('not a WAL database');
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (error) {
    clearInterval(timer);
    db.close();
    throw error;
  }
  if (workerData.tell) parentPort.postMessage('checkpointed');
}, workerData.everyMs);
parentPort.postMessage('ready');
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/** What the thread does, told as it happens: for tests, which wait on it instead of polling. */
export interface CheckpointEvents {
  /** The thread's connection is open and the store's has stopped checkpointing at commit. */
  started?(): void;
  /** The thread has run a checkpoint. */
  checkpointed?(): void;
}

export interface Checkpointer {
  /** Counts a committed write transaction; starts the thread once there were enough. */
  committed(): void;
  /** Stops the thread and closes its connection; resolves once it has. */
  stop(): Promise<void>;
}

export function createCheckpointer(raw: Database.Database, events: CheckpointEvents = {}): Checkpointer {
  let commits = 0;
  let closed = false;
  let worker: Worker | null = null;
  let exited: Promise<void> = Promise.resolve();

  function start() {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const thread = new Worker(PROGRAM, {
      eval: true,
      workerData: {
        driver,
        filename: raw.name,
        everyMs: CHECKPOINT_EVERY_MS,
        tell: events.checkpointed !== undefined,
      },
    });
    thread.unref();
    thread.on('message', (message) => {
      if (message === 'checkpointed') return events.checkpointed?.();
      // The store's connection stops checkpointing only once the thread's connection is open.
      if (raw.open && !closed) raw.pragma('wal_autocheckpoint = 0');
      events.started?.();
    });
    exited = new Promise((resolve) => {
      thread.once('exit', () => {
        if (raw.open) raw.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
        resolve();
      });
    });
    thread.once('error', () => {}); // its exit restores checkpoints at commit
    worker = thread;
  }

  return {
    committed() {
      if (++commits !== CHECKPOINTER_AFTER_COMMITS || closed || raw.memory) return;
      // After a commit: a thread that cannot start leaves checkpoints where they were, and never
      // turns the commit its caller made into an error.
      try {
        start();
      } catch {
        worker = null;
      }
    },
    async stop() {
      closed = true;
      worker?.postMessage('stop');
      await exited;
      worker = null;
    },
  };
}
