/**
 * On SQLite one process serves and delivers: a second `serve` or `worker` on the same database is
 * refused at once with what to do, short commands still run beside the one serving, and a process
 * killed with SIGKILL leaves nothing that stops the next start.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type CliService, runCli, startCli } from './helpers/cli-process.js';

const dir = mkdtempSync(join(tmpdir(), 'linkhooks-one-process-'));
const env = {
  LINKHOOKS_SERVICE_TOKEN: 'svc_one_process_0123456789abcdef',
  LINKHOOKS_MASTER_KEY: randomBytes(32).toString('base64'),
  LINKHOOKS_LOG_LEVEL: 'info',
};
const started: CliService[] = [];
afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
});

const start = (args: string[]) => {
  const service = startCli(args, env);
  started.push(service);
  return service;
};
const serving = async (db: string) => {
  const service = start(['serve', '--db', db, '--port', '0']);
  const line = await service.logged((l) => typeof l.url === 'string', 'listening');
  return { service, base: line.url as string };
};

describe('one process on a SQLite database', () => {
  it('refuses a second serve or worker, runs short commands beside it, and restarts after SIGKILL', async () => {
    const db = `sqlite:${join(dir, 'one.db')}`;
    const first = await serving(db);
    for (const command of ['serve', 'worker']) {
      // Started as the first was, so that one that does start is stopped at the end.
      const second = start([command, '--db', db, ...(command === 'serve' ? ['--port', '0'] : [])]);
      await expect(
        second.logged((l) => typeof l.url === 'string' || /worker delivering/.test(l.msg), 'starting'),
      ).rejects.toThrow(
        `linkhooks-sender: another linkhooks-sender process is serving ${db}: on SQLite one process serves and delivers. Stop that one first, or use PostgreSQL to run several.`,
      );
      expect(await second.stop()).toBe(1);
    }
    const created = await runCli(
      ['accounts', 'create', '--name', 'Beside', '--plan', 'business', '--db', db],
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    expect((await fetch(`${first.base}/healthz`)).status).toBe(200);

    first.service.child.kill('SIGKILL');
    expect(await first.service.stop()).toBeNull();
    const next = await serving(db);
    expect((await fetch(`${next.base}/healthz`)).status).toBe(200);
    expect(await next.service.stop()).toBe(0);
  });

  it('makes a first start’s folder, and a lock file only its owner reads', async () => {
    const file = join(dir, 'fresh', 'data', 'linkhooks.db');
    const first = await serving(`sqlite:${file}`);
    expect((await fetch(`${first.base}/healthz`)).status).toBe(200);
    expect(statSync(`${file}.lock`).mode & 0o777).toBe(0o600);
    // One made before, readable by others, is the owner's alone once served.
    const older = join(dir, 'older.db');
    writeFileSync(`${older}.lock`, '', { mode: 0o644 });
    chmodSync(`${older}.lock`, 0o644);
    await serving(`sqlite:${older}`);
    expect(statSync(`${older}.lock`).mode & 0o777).toBe(0o600);
  });

  it('lets another database be served beside it', async () => {
    const a = await serving(`sqlite:${join(dir, 'a.db')}`);
    const b = await serving(`sqlite:${join(dir, 'b.db')}`);
    for (const s of [a, b]) expect((await fetch(`${s.base}/healthz`)).status).toBe(200);
  });
});
