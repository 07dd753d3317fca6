import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readDbFile } from './db-file.js';
import { DEFAULT_DB, parseCommand } from './options.js';

const URL_WITH_PASSWORD = 'postgres://linkhooks:hunter2@db:5432/linkhooks';
const dir = mkdtempSync(join(tmpdir(), 'linkhooks-db-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: string, mode: number) {
  const path = join(dir, name);
  writeFileSync(path, content);
  chmodSync(path, mode);
  return path;
}

function read(path: string) {
  const warnings: string[] = [];
  const db = readDbFile(path, '--db-file', (m) => warnings.push(m));
  return { db, warnings };
}

describe('readDbFile', () => {
  it('reads the URL, without the final newline, and says nothing about a file only its owner reads', () => {
    expect(read(file('owner', `${URL_WITH_PASSWORD}\n`, 0o600))).toEqual({
      db: URL_WITH_PASSWORD,
      warnings: [],
    });
  });

  it.skipIf(process.platform === 'win32').each([
    ['its group', 0o640],
    ['everyone', 0o644],
  ])('warns, without the URL, when %s can read it', (_label, mode) => {
    const path = file(`mode-${mode.toString(8)}`, URL_WITH_PASSWORD, mode);
    const { db, warnings } = read(path);
    expect(db).toBe(URL_WITH_PASSWORD);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/can be read by other users of this machine .*chmod 600/);
    expect(warnings[0]).toContain(path);
    expect(warnings[0]).not.toContain('hunter2');
  });

  it('refuses a missing, empty or folder path with a message that names the file', () => {
    expect(() => read(join(dir, 'missing'))).toThrow(/--db-file: cannot read .*missing \(no such file\)/);
    expect(() => read(file('empty', ' \n', 0o600))).toThrow(/empty is empty/);
    expect(() => read(dir)).toThrow(/it is a folder/);
    expect(() => read('')).toThrow(/needs the path/);
  });
});

describe('where the database URL comes from', () => {
  const files: Record<string, string> = {
    '/run/db-url': 'sqlite:from-file.db',
    '/run/env-url': 'sqlite:env-file.db',
  };
  const reader = (path: string) => {
    const db = files[path];
    if (db === undefined) throw new Error(`unexpected read of ${path}`);
    return db;
  };
  const dbOf = (argv: string[], env: Record<string, string> = {}) => {
    const command = parseCommand(['migrate', ...argv], env, reader);
    return command.kind === 'migrate' ? command.db : undefined;
  };

  it('takes --db, then --db-file, then LINKHOOKS_DB, then LINKHOOKS_DB_FILE', () => {
    const env = { LINKHOOKS_DB: 'sqlite:env.db' };
    expect(dbOf(['--db', 'sqlite:flag.db'], { ...env, LINKHOOKS_DB_FILE: '/run/env-url' })).toBe(
      'sqlite:flag.db',
    );
    expect(dbOf(['--db-file', '/run/db-url'], env)).toBe('sqlite:from-file.db');
    expect(dbOf([], env)).toBe('sqlite:env.db');
    expect(dbOf([], { LINKHOOKS_DB_FILE: '/run/env-url' })).toBe('sqlite:env-file.db');
    expect(dbOf([])).toBe(DEFAULT_DB);
  });

  it('refuses two sources at the same level, and a file that holds no database URL', () => {
    expect(() => dbOf(['--db', 'sqlite:a.db', '--db-file', '/run/db-url'])).toThrow(
      /give --db or --db-file, not both/,
    );
    expect(() => dbOf([], { LINKHOOKS_DB: 'sqlite:a.db', LINKHOOKS_DB_FILE: '/run/env-url' })).toThrow(
      /set LINKHOOKS_DB or LINKHOOKS_DB_FILE, not both/,
    );
    files['/run/bad'] = 'mysql://root:hunter2@db/x';
    expect(() => dbOf(['--db-file', '/run/bad'])).toThrow(/the URL in --db-file \/run\/bad must be/);
    try {
      dbOf(['--db-file', '/run/bad']);
    } catch (error) {
      expect((error as Error).message).not.toContain('hunter2');
    }
  });
});

describe('a database URL of another kind', () => {
  it('is refused naming where it came from, the flag or its variable', () => {
    const refusal = (argv: string[], env: Record<string, string>) => {
      try {
        parseCommand(argv, env);
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    const kinds = 'must be sqlite:<file> or postgres://user@host:port/database';
    expect(refusal(['migrate', '--db', 'mysql://x'], {})).toBe(`--db ${kinds}`);
    expect(refusal(['migrate'], { LINKHOOKS_DB: 'mysql://x' })).toBe(`LINKHOOKS_DB ${kinds}`);
  });
});
