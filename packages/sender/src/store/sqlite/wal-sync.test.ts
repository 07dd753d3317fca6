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

  it('a failed sync rejects the commits it covered; the next commit gets a new sync', async () => {
    const sync = manualSync();
    const wal = createWalSync(walFile(), sync.fn);
    const failed = wal.durable(wal.committed());
    sync.finish(0, new Error('EIO'));
    await expect(failed).rejects.toThrow('EIO');
    const next = wal.durable(wal.committed());
    expect(sync.started()).toBe(2);
    sync.finish(1);
    await expect(next).resolves.toBeUndefined();
    wal.close();
  });

  it('syncs a real file with fdatasync, and reports a missing WAL file as an error', async () => {
    const wal = createWalSync(walFile());
    await expect(wal.durable(wal.committed())).resolves.toBeUndefined();
    wal.close();
    const missing = createWalSync(join(tmpdir(), 'no-such-dir-for-wal', 'x.db-wal'));
    await expect(missing.durable(missing.committed())).rejects.toThrow(/ENOENT/);
  });
});
