/**
 * WAL checkpoints off the event loop (design D57). By default SQLite checkpoints inside the commit
 * that takes the WAL past 1,000 pages: that commit copies the frames into the database file and
 * syncs it, milliseconds to tens of milliseconds in which the process serves no request. Once a
 * store has committed a few hundred write transactions (a store serving load within a second; an
 * idle service's claims count too, so within minutes; a short-lived store such as a CLI command's
 * never), a worker thread with its own connection takes over: it checkpoints in PASSIVE mode (it
 * never waits for, nor holds up, any writer) every CHECKPOINT_EVERY_MS, and the store's connection
 * stops checkpointing at commit. Should the thread fail, the connection checkpoints at commit
 * again, as before. Past WAL_LIMIT_FRAMES the store's queued writes pause for one checkpoint, so
 * the WAL starts over (design D58).
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/** Write transactions a store commits before its checkpoints move off the event loop. */
export const CHECKPOINTER_AFTER_COMMITS = 200;
export const CHECKPOINT_EVERY_MS = 100;
/** SQLite's own default: the connection checkpoints at commit past this many WAL pages. */
const AUTOCHECKPOINT_PAGES = 1000;
/** The WAL's size past which the store's queued writes pause for one checkpoint (64 MiB of 4 KiB pages). */
export const WAL_LIMIT_FRAMES = 16_384;

// The thread's whole program: one connection to the store's file (which must exist, in WAL mode), a
// PASSIVE checkpoint on a timer, closed on 'stop'. A checkpoint copies only the frames committed
// before it began, and the WAL starts over from its beginning only when a write begins with every
// frame copied: under writes that never pause, it would grow without end. So past `threshold` the
// thread says 'over'; the store holds its queued writes and answers 'catch-up', and the thread
// checkpoints once more, now with nothing being added: every frame is copied, and the store's next
// write starts the WAL over. Should it not (another process reads an older snapshot), the thread
// asks again only once the WAL has grown by another limit. A checkpoint that fails ends the thread:
// the store's connection then checkpoints at commit again.
const PROGRAM = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.filename, { fileMustExist: true });
// Prepared once and kept while the thread runs: no statement is left to the collector (database.ts).
// One object, which the timer's closure holds: a constant it did not use would be freed.
const statements = {
  mode: db.prepare('PRAGMA journal_mode').pluck(),
  passive: db.prepare('PRAGMA wal_checkpoint(PASSIVE)'),
};
if (statements.mode.get() !== 'wal') throw new Error('not a WAL database');
const limit = workerData.limitFrames;
let threshold = limit;
let last = 0;
let asked = false;
const checkpoint = () => {
  try {
    return statements.passive.get();
  } catch (error) {
    clearInterval(timer);
    db.close();
    throw error;
  }
};
// A checkpoint that met another connection's answers log -1: it tells nothing of the WAL.
const timer = setInterval(() => {
  const { log } = checkpoint();
  if (log < 0) return;
  if (workerData.tell) parentPort.postMessage({ type: 'checkpointed', log });
  if (log < last) threshold = limit; // it started over
  last = log;
  if (log >= threshold && !asked) {
    asked = true;
    parentPort.postMessage({ type: 'over', log });
  }
}, workerData.everyMs);
parentPort.postMessage({ type: 'ready' });
parentPort.on('message', (message) => {
  if (message === 'catch-up') {
    const { log, checkpointed } = checkpoint();
    if (log >= 0) last = log;
    asked = false;
    threshold = last + limit;
    parentPort.postMessage({ type: 'caught-up', log, checkpointed });
    return;
  }
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/** What the thread does, told as it happens: for tests, which wait on it instead of polling. */
export interface CheckpointEvents {
  /** The thread's connection is open and the store's has stopped checkpointing at commit. */
  started?(): void;
  /** The thread has run a checkpoint; `log`: the frames in the WAL. */
  checkpointed?(log: number): void;
  /** The WAL held `log` frames, past its limit: the store's queued writes wait for one checkpoint. */
  holding?(log: number): void;
  /** That checkpoint has run (`checkpointed` of `log` frames copied); the held writes go on. */
  caughtUp?(log: number, checkpointed: number): void;
  /** Tests: the WAL's limit in frames, instead of WAL_LIMIT_FRAMES. */
  limitFrames?: number;
  /** Tests: the time between the thread's checkpoints, instead of CHECKPOINT_EVERY_MS. */
  everyMs?: number;
}

export interface Checkpointer {
  /** Counts a committed write transaction; starts the thread once there were enough. */
  committed(): void;
  /**
   * While the thread catches up with a WAL past its limit, a promise resolved once it has: the
   * store's queued writes wait for it (on the event loop's terms: nothing blocks). Null the rest
   * of the time.
   */
  held(): Promise<void> | null;
  /** Stops the thread and closes its connection; resolves once it has. */
  stop(): Promise<void>;
}

export function createCheckpointer(raw: Database.Database, events: CheckpointEvents = {}): Checkpointer {
  let commits = 0;
  let closed = false;
  let worker: Worker | null = null;
  let exited: Promise<void> = Promise.resolve();
  let hold: { done: Promise<void>; release: () => void } | null = null;

  /** Writes wait until the thread has caught up, or has gone (its exit releases them). */
  function holdWrites(thread: Worker, log: number) {
    let release = (): void => undefined;
    const done = new Promise<void>((resolve) => {
      release = () => {
        hold = null;
        resolve();
      };
    });
    hold = { done, release };
    events.holding?.(log);
    // Posted between two transactions (the store's run synchronously, and this is a message
    // callback): the queue adds nothing while the thread copies the rest. Writes outside the queue
    // (the management API's) go on; one that comes first only means the WAL does not start over yet.
    thread.postMessage('catch-up');
  }

  function start() {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const thread = new Worker(PROGRAM, {
      eval: true,
      workerData: {
        driver,
        filename: raw.name,
        everyMs: events.everyMs ?? CHECKPOINT_EVERY_MS,
        limitFrames: events.limitFrames ?? WAL_LIMIT_FRAMES,
        tell: events.checkpointed !== undefined,
      },
    });
    thread.unref();
    thread.on('message', (message: { type: string; log?: number; checkpointed?: number }) => {
      const log = message.log ?? 0;
      if (message.type === 'checkpointed') return events.checkpointed?.(log);
      if (message.type === 'over') return closed ? undefined : holdWrites(thread, log);
      if (message.type === 'caught-up') {
        events.caughtUp?.(log, message.checkpointed ?? 0);
        return hold?.release();
      }
      // The store's connection stops checkpointing only once the thread's connection is open.
      if (raw.open && !closed) raw.exec('PRAGMA wal_autocheckpoint = 0');
      events.started?.();
    });
    exited = new Promise((resolve) => {
      thread.once('exit', () => {
        if (raw.open) raw.exec(`PRAGMA wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
        hold?.release();
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
    held: () => hold?.done ?? null,
    async stop() {
      closed = true;
      // Kept alive until the thread has gone: unreferenced, a process with nothing else to do
      // would exit here, and whatever its caller does after close would never run.
      worker?.ref();
      worker?.postMessage('stop');
      await exited;
      worker = null;
    },
  };
}
