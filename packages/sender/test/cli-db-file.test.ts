/**
 * `linkhooks-sender --db-file` run as an operator would: the URL, password included, read from a
 * file and never printed; a warning when others can read the file.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli-process.js';
import { pgSchemas } from './helpers/pg-schemas.js';
import { PG_URL, requireService } from './helpers/services.js';

const PASSWORD = 'hunter2-not-to-be-printed';
const dir = mkdtempSync(join(tmpdir(), 'linkhooks-db-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function dbFile(name: string, url: string, mode = 0o600) {
  const path = join(dir, name);
  writeFileSync(path, `${url}\n`);
  chmodSync(path, mode);
  return path;
}

/** `url` with PASSWORD as its password. */
function withPassword(url: string) {
  const u = new URL(url);
  u.password = PASSWORD;
  return u.toString();
}

describe('linkhooks-sender --db-file', () => {
  it('migrates the SQLite database the file names, quietly when only its owner reads it', async () => {
    const out = await runCli(['migrate', '--db-file', dbFile('sqlite-url', `sqlite:${join(dir, 'a.db')}`)]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain(`Migrated sqlite:${join(dir, 'a.db')}`);
    expect(out.stderr).toBe('');
  });

  it('takes LINKHOOKS_DB_FILE, and warns without the URL when others can read the file', async () => {
    const path = dbFile('shared-url', `sqlite:${join(dir, 'b.db')}`, 0o644);
    const out = await runCli(['migrate'], { LINKHOOKS_DB_FILE: path, LINKHOOKS_DB: '' });
    // LINKHOOKS_DB set (even empty) alongside LINKHOOKS_DB_FILE is refused: run without it.
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/set LINKHOOKS_DB or LINKHOOKS_DB_FILE, not both/);
    const warned = await runCli(['migrate'], { LINKHOOKS_DB_FILE: path });
    expect(warned.code, warned.stderr).toBe(0);
    expect(warned.stderr).toMatch(
      /^linkhooks-sender: warning: LINKHOOKS_DB_FILE: .*shared-url can be read by other users of this machine \(mode 644\)/,
    );
    expect(warned.stderr).not.toContain('b.db');
  });

  it('never prints the password of an unreachable database', async () => {
    const out = await runCli([
      'migrate',
      '--db-file',
      dbFile('down-url', withPassword('postgres://postgres@127.0.0.1:1/test'), 0o644),
    ]);
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(
      /cannot reach the database postgres:\/\/postgres:\*\*\*\*@127\.0\.0\.1:1\/test/,
    );
    expect(out.stderr).toMatch(/warning: --db-file: .*down-url can be read by other users/);
    expect(`${out.stdout}${out.stderr}`).not.toContain(PASSWORD);
  });

  it('refuses --db with --db-file, and a missing file (exit 2)', async () => {
    const both = await runCli(['migrate', '--db', 'sqlite:x.db', '--db-file', dbFile('x', 'sqlite:x.db')]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/^linkhooks-sender: give --db or --db-file, not both/);
    const missing = await runCli(['migrate', '--db-file', join(dir, 'nowhere')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--db-file: cannot read .*nowhere \(no such file\)/);
  });

  it('--help says a password in --db is visible and offers PGPASSWORD and --db-file', async () => {
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/A password in the URL works, but other users of this machine can see it/);
    expect(help.stdout).toMatch(/set PGPASSWORD, or use --db-file/);
    expect(help.stdout).toMatch(/--db-file F {2,}read the URL/);
  });
});

describe('linkhooks-sender --db-file on PostgreSQL', async () => {
  const up = await requireService('PostgreSQL', PG_URL);
  const schemas = pgSchemas('cli_db_file');
  afterAll(() => (up ? schemas.drop() : schemas.admin.end()));
  const schema = schemas.fresh();

  it.runIf(up)(
    'migrates with the URL and its password from the file, printing the password masked',
    async () => {
      // The test server trusts local connections: the password is carried, not checked.
      const path = dbFile('pg-url', `${withPassword(PG_URL)}?schema=${schema}`);
      const out = await runCli(['migrate', '--db-file', path]);
      expect(out.code, out.stderr).toBe(0);
      expect(out.stdout).toMatch(/^Migrated postgres:\/\/[^:]+:\*\*\*\*@/);
      expect(`${out.stdout}${out.stderr}`).not.toContain(PASSWORD);
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      const tables = await client.query('SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = $1', [
        schema,
      ]);
      await client.end();
      expect(tables.rows[0].n).toBeGreaterThan(0);
    },
  );
});
