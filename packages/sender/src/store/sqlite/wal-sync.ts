/**
 * Makes committed SQLite transactions durable without holding the event loop (design D33). A
 * commit in `synchronous = NORMAL` has written its frames to the WAL file but not synced them;
 * `fdatasync` of that file, run on libuv's thread pool, then makes them survive a power cut, as
 * `FULL` would have, while the loop goes on parsing the next requests. One sync covers every
 * commit made before it started, so commits that arrive together share it.
 */
import { closeSync, fdatasync, openSync } from 'node:fs';
import { SenderError } from '../../errors.js';
import { unavailableError } from '../unavailable.js';

export interface WalSync {
  /** Marks a commit just made; answers its number, to wait on with `durable`. */
  committed(): number;
  /** Resolves once a sync that started after commit `seq` has completed; rejects if it failed. */
  durable(seq: number): Promise<void>;
  /**
   * What a commit that will wait on `durable` waits for first, or null to commit now. While a sync
   * runs and no commit waits for the next one yet, the next starts only after a commit: one made
   * now would wait for it all the same. So commits held until that sync ends, or until a commit
   * does wait for the next sync, share it. Rejects as `durable` would (a failed sync, a closed file).
   */
  holdCommit(): Promise<void> | null;
  /** Closes the file once a sync under way has finished; later calls to `durable` and holds reject. */
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
  /**
   * The sync under way: the commits it covers, whether a commit waits for the next one, and the
   * hold on commits (holdCommit) with its release.
   */
  let running: { covers: number; next: boolean; hold: Promise<void> | null; release: () => void } | null =
    null;
  let closed = false;
  // After a failed sync the kernel may have dropped the unsynced pages and a later sync of the
  // same file succeeds without them: nothing is acknowledged again until the process restarts.
  let failure: SenderError | undefined;
  let waiters: Waiter[] = [];

  function start() {
    const covers = commits;
    running = { covers, next: false, hold: null, release: () => {} };
    try {
      // Opened on first use: the WAL file exists once the first transaction has been written.
      fd ??= openSync(walPath, 'r');
    } catch (error) {
      return finish(covers, error);
    }
    try {
      datasync(fd, (error) => finish(covers, error));
    } catch (error) {
      // Thrown at once, it would leave the sync running forever, and every publish waiting with it.
      finish(covers, error);
    }
  }

  function finish(covers: number, error: unknown) {
    // The holders resume after this call, so they see the failure set below.
    running?.release();
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

  // Not a failed sync: a closed store is "not now", as a closed PostgreSQL pool is (unavailable.ts).
  const closedError = () => unavailableError('the store is closed');
  /** Why nothing more may be committed to wait on a sync: a failed sync, or a closed file. */
  const refusal = () => failure ?? (closed ? closedError() : null);

  function release() {
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
  }

  return {
    committed: () => ++commits,
    durable(seq) {
      if (failure) return Promise.reject(failure);
      if (seq <= synced) return Promise.resolve();
      if (closed) return Promise.reject(closedError());
      return new Promise((resolve, reject) => {
        waiters.push({ seq, resolve, reject });
        if (!running) start();
        else if (seq > running.covers && !running.next) {
          // The next sync starts as this one ends: what is held commits now, to be in it too.
          running.next = true;
          running.release();
        }
      });
    },
    holdCommit() {
      const refused = refusal();
      if (refused) return Promise.reject(refused);
      if (!running || running.next) return null;
      const sync = running;
      sync.hold ??= new Promise<void>((resolve) => {
        sync.release = resolve;
      });
      return sync.hold.then(() => {
        const refusedSince = refusal();
        if (refusedSince) throw refusedSince;
      });
    },
    close() {
      closed = true;
      if (!running) release();
    },
  };
}
