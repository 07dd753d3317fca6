/**
 * `linkhooks-sender migrate` run as an operator's deploy runs it: what it applied, that a second run
 * applies nothing, and a warning (not a refusal) on a database a newer version migrated, from
 * `migrate` and from `serve`'s start.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { PG_MIGRATIONS } from '../src/store/postgres/migrate.js';
import { SQLITE_MIGRATIONS } from '../src/store/sqlite/migrate.js';
import { runCli, startCli } from './helpers/cli-process.js';
import { pgSchemas } from './helpers/pg-schemas.js';
import { PG_URL, requireService } from './helpers/services.js';

const dir = mkdtempSync(join(tmpdir(), 'linkhooks-migrate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const latest = (migrations: readonly { version: number }[]) => Math.max(...migrations.map((m) => m.version));

/** Runs migrate twice on `db`, checking what each run says it did. */
async function migrateTwice(db: string, migrations: readonly { version: number; name: string }[]) {
  const first = await runCli(['migrate', '--db', db]);
  expect(first.code, first.stderr).toBe(0);
  const version = latest(migrations);
  expect(first.stdout).toContain(`to schema version ${version}, applying ${migrations.length} migrations:`);
  for (const m of migrations) expect(first.stdout).toContain(`  ${m.version}  ${m.name}\n`);
  const second = await runCli(['migrate', '--db', db]);
  expect(second.code, second.stderr).toBe(0);
  expect(second.stdout).toMatch(
    new RegExp(`^Migrated .*: already at schema version ${version}, nothing to apply\\.\\n$`),
  );
  expect(second.stderr).toBe('');
}

const NEWER = `linkhooks-sender does not know: a newer version migrated it`;

describe('linkhooks-sender migrate on SQLite', () => {
  const file = join(dir, 'a.db');
  const db = `sqlite:${file}`;

  it('lists the migrations it applies, then applies none', () => migrateTwice(db, SQLITE_MIGRATIONS));

  it('warns, and still runs, on a database a newer version migrated', async () => {
    const raw = new Database(file);
    raw
      .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
      .run(999, 'later', 1);
    raw.close();
    const out = await runCli(['migrate', '--db', db]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(
      /nothing to apply; it is at schema version 999, newer than this version knows/,
    );
    expect(out.stderr).toMatch(
      new RegExp(`^linkhooks-sender: warning: ${db} has migration 999 applied, which this ${NEWER}`),
    );

    const service = startCli(['serve', '--db', db, '--port', '0', '--host', '127.0.0.1'], {
      LINKHOOKS_SERVICE_TOKEN: 'svc_migrate_test_token_0123456789',
    });
    try {
      const line = await service.logged((l) => l.msg.includes(NEWER), 'the newer-schema warning');
      expect(line.level).toBe(40); // pino's warn
      await service.logged((l) => typeof l.url === 'string', 'listening');
    } finally {
      await service.stop();
    }
  });
});

describe('linkhooks-sender migrate on PostgreSQL', async () => {
  const up = await requireService('PostgreSQL', PG_URL);
  const schemas = pgSchemas('cli_migrate');
  afterAll(() => (up ? schemas.drop() : schemas.admin.end()));

  it.runIf(up)('lists the migrations it applies, then applies none', () =>
    migrateTwice(`${PG_URL}?schema=${schemas.fresh()}`, PG_MIGRATIONS),
  );

  it.runIf(up)('says in the server’s words, and what to do, when the database refuses', async () => {
    const url = new URL(PG_URL);
    url.pathname = `/lh_no_such_database_${process.pid}`;
    const missing = await runCli(['migrate', '--db', url.toString()]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      `refused: database "lh_no_such_database_${process.pid}" does not exist (3D000); create it (createdb)`,
    );
    url.pathname = new URL(PG_URL).pathname;
    url.username = `lh_no_such_role_${process.pid}`;
    const role = await runCli(['migrate', '--db', url.toString()]);
    expect(role.code).toBe(1);
    expect(role.stderr).toMatch(/refused: .*lh_no_such_role_\d+.* \(28000\); name a role that exists/);
  });

  it('refuses a ?schema= that is not an identifier as a usage error, before connecting', async () => {
    const bad = await runCli(['migrate', '--db', 'postgres://postgres@127.0.0.1:1/test?schema=Bad-Name']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^linkhooks-sender: --db has a \?schema= that is not a lowercase identifier/);
  });
});
