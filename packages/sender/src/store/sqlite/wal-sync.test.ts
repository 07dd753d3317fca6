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

  it('holds commits while a sync runs, until it ends or a commit waits for the next one', async () => {
    const sync = manualSync();
    const wal = createWalSync(walFile(), sync.fn);
    // No sync under way: commit now.
    expect(wal.holdCommit()).toBeNull();
    const first = wal.durable(wal.committed());
    const held = wal.holdCommit()!;
    expect(await settledState(held)).toBe('pending');
    sync.finish(0);
    expect(await settledState(held)).toBe('resolved');
    await first;
    expect(wal.holdCommit()).toBeNull();

    // A commit made during the sync waits for the next one, which starts as this one ends: what
    // was held is let go at once, to be in it too, and nothing more is held.
    const second = wal.durable(wal.committed());
    const heldAgain = wal.holdCommit()!;
    const third = wal.durable(wal.committed());
    expect(await settledState(heldAgain)).toBe('resolved');
    expect(wal.holdCommit()).toBeNull();
    expect(sync.started()).toBe(2);
    sync.finish(1);
    expect(sync.started()).toBe(3);
    sync.finish(2);
    await Promise.all([second, third]);
    wal.close();
  });

  it('a hold ends in the error of a failed sync, or of a close', async () => {
    const sync = manualSync();
    const wal = createWalSync(walFile(), sync.fn);
    // Their expectations attached before the sync ends: no rejection goes unwatched for a moment.
    const failed = expect(wal.durable(wal.committed())).rejects.toMatchObject({ code: 'storage_failed' });
    const held = expect(wal.holdCommit()!).rejects.toMatchObject({
      code: 'storage_failed',
      cause: new Error('EIO'),
    });
    sync.finish(0, new Error('EIO'));
    await held;
    await failed;
    await expect(wal.holdCommit()).rejects.toMatchObject({ code: 'storage_failed' });

    const other = manualSync();
    const closing = createWalSync(walFile(), other.fn);
    const first = closing.durable(closing.committed());
    const heldAtClose = expect(closing.holdCommit()!).rejects.toMatchObject({
      code: 'store_unavailable',
      message: 'the store is closed',
    });
    closing.close();
    other.finish(0);
    await first;
    await heldAtClose;
    await expect(closing.holdCommit()).rejects.toMatchObject({
      code: 'store_unavailable',
      message: 'the store is closed',
    });
  });

  it('close waits for the sync under way, then refuses new waits', async () => {
    const sync = manualSync();
    const wal = createWalSync(walFile(), sync.fn);
    const first = wal.durable(wal.committed());
    wal.close();
    await expect(wal.durable(wal.committed())).rejects.toMatchObject({
      code: 'store_unavailable',
      message: 'the store is closed',
    });
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
