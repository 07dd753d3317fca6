/**
 * better-sqlite3 is built for the Node.js it was installed with. Run under another (the workspace's
 * build, under Node.js 22), `serve` and `accounts create` both say that the driver needs building
 * again and how, where `serve` had blamed its lock file.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireRuntime } from '@linkhooks/runtimes';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli-process.js';

const dir = mkdtempSync(join(tmpdir(), 'linkhooks-sqlite-driver-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const bin = requireRuntime('node22', 'a SQLite driver built for another Node.js');
const env = { LINKHOOKS_SERVICE_TOKEN: 'svc_driver_0123456789abcdef' };

describe.runIf(bin !== null)('a SQLite driver built for another Node.js', () => {
  it.each([
    ['serve', ['serve', '--port', '0']],
    ['accounts create', ['accounts', 'create', '--name', 'Acme', '--plan', 'business']],
  ])('%s names the driver and the rebuild', async (_name, args) => {
    const db = join(dir, args[0]!, 'linkhooks.db');
    const out = await runCli([...args, '--db', `sqlite:${db}`], env, join(bin!, 'node'));
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(
      /^linkhooks-sender: the SQLite driver \(better-sqlite3\) was built for another Node\.js version \(module version \d+\), not for this one \(Node\.js 22\.[\d.]+, module version \d+\): run `npm rebuild better-sqlite3` in the project, then start again\n$/,
    );
    // Nothing written: not the database, its folder or its lock.
    expect(existsSync(join(dir, args[0]!))).toBe(false);
  });
});
