import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';

const script = fileURLToPath(new URL('./fixtures/close-sqlite-store.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'linkhooks-close-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('keeps a process whose last step is closing a SQLite store alive until the close is done', async () => {
  // The checkpoints' thread never keeps the process alive on its own. Left so while it stops, a
  // process with nothing else to do would end mid-close (in most runs: a race with the thread's
  // exit), and the caller's next line would never run.
  const file = join(dir, 'store.db');
  const { stdout } = await promisify(execFile)(process.execPath, [script], {
    env: { ...process.env, DB: file },
    timeout: 30_000, // a thread that never checkpoints leaves the fixture waiting: killed, it fails
  });
  expect(stdout).toBe('closed\n');
  // Closed whole: the store's connection, closed last, removes the WAL.
  expect(existsSync(`${file}-wal`)).toBe(false);
});
