/**
 * Makes committed SQLite transactions durable without holding the event loop (design D33). A
 * commit in `synchronous = NORMAL` has written its frames to the WAL file but not synced them;
 * `fdatasync` of that file, run on libuv's thread pool, then makes them survive a power cut, as
 * `FULL` would have, while the loop goes on parsing the next requests. One sync covers every
 * commit made before it started, so commits that arrive together share it.
 */
import { closeSync, fdatasync, openSync } from 'node:fs';
import { SenderError } from '../../errors.js';

export interface WalSync {
  /** Marks a commit just made; answers its number, to wait on with `durable`. */
  committed(): number;
  /** Resolves once a sync that started after commit `seq` has completed; rejects if it failed. */
  durable(seq: number): Promise<void>;
  /**
   * The sync under way, if one is: resolves once it has completed, whatever its outcome; null
   * when none is running.
   */
  syncing(): Promise<void> | null;
  /** Closes the file once a sync under way has finished; later calls to `durable` reject. */
  close(): void;
}

type Waiter = { seq: number; resolve: () => void; reject: (error: unknown) => void };

/**
 * @example
 * const wal = createWalSync('./data/linkhooks.db-wal');
 * commitNormal(); await wal.durable(wal.committed());
 */
export function createWalSync(
  walPath: string,
  /** The sync itself; a test passes one it controls. */
  datasync: (fd: number, done: (error: unknown) => void) => void = fdatasync,
): WalSync {
  let fd: number | undefined;
  let commits = 0;
  let synced = 0;
  /** The sync under way: resolved when it completes. */
  let running: { done: Promise<void>; end: () => void } | null = null;
  let closed = false;
  // After a failed sync the kernel may have dropped the unsynced pages and a later sync of the
  // same file succeeds without them: nothing is acknowledged again until the process restarts.
  let failure: SenderError | undefined;
  let waiters: Waiter[] = [];

  function start() {
    let end = () => {};
    running = { done: new Promise<void>((resolve) => (end = resolve)), end };
    const covers = commits;
    try {
      // Opened on first use: the WAL file exists once the first transaction has been written.
      fd ??= openSync(walPath, 'r');
    } catch (error) {
      return finish(covers, error);
    }
    datasync(fd, (error) => finish(covers, error));
  }

  function finish(covers: number, error: unknown) {
    running?.end();
    running = null;
    if (error && !failure) {
      failure = new SenderError(
        'storage_failed',
        'the database could not be synced to disk; restart the service so that it recovers from what the disk holds',
        { cause: error },
      );
    }
    if (!failure) synced = covers;
    const settled = failure ? waiters : waiters.filter((w) => w.seq <= covers);
    waiters = failure ? [] : waiters.filter((w) => w.seq > covers);
    for (const w of settled) {
      if (failure) w.reject(failure);
      else w.resolve();
    }
    if (waiters.length > 0) start();
    else if (closed) release();
  }

  function release() {
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
  }

  return {
    committed: () => ++commits,
    durable(seq) {
      if (failure) return Promise.reject(failure);
      if (seq <= synced) return Promise.resolve();
      if (closed) return Promise.reject(new SenderError('storage_failed', 'the store is closed'));
      return new Promise((resolve, reject) => {
        waiters.push({ seq, resolve, reject });
        if (!running) start();
      });
    },
    syncing: () => running?.done ?? null,
    close() {
      closed = true;
      if (!running) release();
    },
  };
}
