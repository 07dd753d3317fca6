/**
 * Makes committed SQLite transactions durable without holding the event loop (design D33). A
 * commit in `synchronous = NORMAL` has written its frames to the WAL file but not synced them;
 * `fdatasync` of that file, run on libuv's thread pool, then makes them survive a power cut, as
 * `FULL` would have, while the loop goes on parsing the next requests. One sync covers every
 * commit made before it started, so commits that arrive together share it.
 */
import { closeSync, fdatasync, openSync } from 'node:fs';

export interface WalSync {
  /** Marks a commit just made; answers its number, to wait on with `durable`. */
  committed(): number;
  /** Resolves once a sync that started after commit `seq` has completed; rejects if it failed. */
  durable(seq: number): Promise<void>;
  /** Closes the file; call after the database is closed. */
  close(): void;
}

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
  let running = false;
  let waiters: { seq: number; resolve: () => void; reject: (error: unknown) => void }[] = [];

  function start() {
    running = true;
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
    running = false;
    if (!error) synced = covers;
    const settled = waiters.filter((w) => w.seq <= covers);
    waiters = waiters.filter((w) => w.seq > covers);
    for (const w of settled) {
      if (error) w.reject(error);
      else w.resolve();
    }
    if (waiters.length > 0) start();
  }

  return {
    committed: () => ++commits,
    durable(seq) {
      if (seq <= synced) return Promise.resolve();
      return new Promise((resolve, reject) => {
        waiters.push({ seq, resolve, reject });
        if (!running) start();
      });
    },
    close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}
