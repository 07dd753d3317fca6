import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createWalSync } from './wal-sync.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function walFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wal-sync-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'x.db-wal'), 'frames');
  return join(dir, 'x.db-wal');
}

/** A sync the test finishes by hand, counting how many were started. */
function manualSync() {
  const pending: ((error: unknown) => void)[] = [];
  return {
    started: () => pending.length,
    fn: (_fd: number, done: (error: unknown) => void) => void pending.push(done),
    finish: (i: number, error: unknown = null) => pending[i]!(error),
  };
}

const settledState = async (p: Promise<unknown>) => {
  let state = 'pending';
  p.then(
    () => {
      state = 'resolved';
    },
    () => {
      state = 'rejected';
    },
  );
  // Lets the promise's reactions run; no timer is involved.
  await Promise.resolve();
  await Promise.resolve();
  return state;
};

describe('createWalSync', () => {
  it('answers a commit only after a sync that started after it, and shares syncs between commits', async () => {
    const sync = manualSync();
    const wal = createWalSync(walFile(), sync.fn);
    const first = wal.durable(wal.committed());
    expect(sync.started()).toBe(1);
    // Commits made while that sync runs are not covered by it: they wait for the next one.
    const second = wal.durable(wal.committed());
    const third = wal.durable(wal.committed());
    expect(sync.started()).toBe(1);
    expect(await settledState(first)).toBe('pending');
    sync.finish(0);
    expect(await settledState(first)).toBe('resolved');
    expect(await settledState(second)).toBe('pending');
    // One sync for both.
    expect(sync.started()).toBe(2);
    sync.finish(1);
    expect(await settledState(second)).toBe('resolved');
    expect(await settledState(third)).toBe('resolved');
    expect(sync.started()).toBe(2);
    // Already durable: no new sync.
    await wal.durable(2);
    expect(sync.started()).toBe(2);
    wal.close();
  });

  it('a failed sync rejects every commit waiting, and every later one, until a restart', async () => {
    const sync = manualSync();
    const wal = createWalSync(walFile(), sync.fn);
    const failed = wal.durable(wal.committed());
    const waiting = wal.durable(wal.committed());
    sync.finish(0, new Error('EIO'));
    await expect(failed).rejects.toMatchObject({ code: 'storage_failed', cause: new Error('EIO') });
    // Not covered by the failed sync, but refused all the same: a later sync could succeed
    // without the pages the kernel dropped.
    await expect(waiting).rejects.toMatchObject({ code: 'storage_failed' });
    await expect(wal.durable(wal.committed())).rejects.toMatchObject({ code: 'storage_failed' });
    expect(sync.started()).toBe(1);
    wal.close();
  });

  it('tells the sync under way, settled once it completes, failed or not', async () => {
    const sync = manualSync();
    const wal = createWalSync(walFile(), sync.fn);
    expect(wal.syncing()).toBeNull();
    const first = wal.durable(wal.committed());
    const running = wal.syncing();
    expect(running).not.toBeNull();
    expect(await settledState(running!)).toBe('pending');
    sync.finish(0);
    expect(await settledState(running!)).toBe('resolved');
    await first;
    expect(wal.syncing()).toBeNull();
    // A failure settles it too: what waits on it learns of the failure from durable().
    const failed = wal.durable(wal.committed());
    const failing = wal.syncing()!;
    sync.finish(1, new Error('EIO'));
    expect(await settledState(failing)).toBe('resolved');
    await expect(failed).rejects.toMatchObject({ code: 'storage_failed' });
    expect(wal.syncing()).toBeNull();
    wal.close();
  });

  it('close waits for the sync under way, then refuses new waits', async () => {
    const sync = manualSync();
    const wal = createWalSync(walFile(), sync.fn);
    const first = wal.durable(wal.committed());
    wal.close();
    await expect(wal.durable(wal.committed())).rejects.toMatchObject({ code: 'storage_failed' });
    sync.finish(0);
    await expect(first).resolves.toBeUndefined();
    expect(sync.started()).toBe(1);
  });

  it('syncs a real file with fdatasync, and reports a missing WAL file as an error', async () => {
    const wal = createWalSync(walFile());
    await expect(wal.durable(wal.committed())).resolves.toBeUndefined();
    wal.close();
    const missing = createWalSync(join(tmpdir(), 'no-such-dir-for-wal', 'x.db-wal'));
    await expect(missing.durable(missing.committed())).rejects.toMatchObject({
      code: 'storage_failed',
      cause: expect.objectContaining({ code: 'ENOENT' }),
    });
  });
});
