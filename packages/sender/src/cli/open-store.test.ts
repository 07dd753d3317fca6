import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { databaseProblem, maskDb, postgresOptions } from './open-store.js';

afterEach(() => {
  vi.unstubAllEnvs();
});

/** The password `pg` would send for these settings: resolved the way a pooled connection does. */
const passwordFor = (db: string) => new pg.Client(postgresOptions(db)).password;

describe('the PostgreSQL connection settings', () => {
  it('leave the password to PGPASSWORD when the URL has none', () => {
    vi.stubEnv('PGPASSWORD', 'from-the-environment');
    const options = postgresOptions('postgres://postgres@127.0.0.1:5432/test?schema=acme');
    expect(options).toEqual({ connectionString: 'postgres://postgres@127.0.0.1:5432/test', schema: 'acme' });
    expect(passwordFor('postgres://postgres@127.0.0.1:5432/test')).toBe('from-the-environment');
  });

  it('use the password in the URL when there is one, ahead of PGPASSWORD', () => {
    vi.stubEnv('PGPASSWORD', 'from-the-environment');
    expect(passwordFor('postgres://postgres:in-the-url@127.0.0.1:5432/test')).toBe('in-the-url');
  });

  it('have no password when neither gives one', () => {
    vi.stubEnv('PGPASSWORD', undefined);
    expect(passwordFor('postgres://postgres@127.0.0.1:5432/test')).toBeFalsy();
  });
});

describe('maskDb', () => {
  it('hides a password and keeps the rest', () => {
    expect(maskDb('postgres://linkhooks:s3cret@db:5432/linkhooks')).toBe(
      'postgres://linkhooks:****@db:5432/linkhooks',
    );
    expect(maskDb('postgres://linkhooks@db:5432/linkhooks')).toBe('postgres://linkhooks@db:5432/linkhooks');
  });

  it('hides the passwords pg reads from the query too', () => {
    const masked = maskDb(
      'postgres://linkhooks@db:5432/linkhooks?password=s3cret&sslpassword=k3y&sslmode=require&schema=acme',
    );
    expect(masked).not.toMatch(/s3cret|k3y/);
    expect(masked).toBe(
      'postgres://linkhooks@db:5432/linkhooks?password=****&sslpassword=****&sslmode=require&schema=acme',
    );
  });
});

/** An error as `pg` gives one the server sent. */
const fromServer = (code: string, message: string) =>
  Object.assign(new Error(message), { code, severity: 'FATAL' });

describe('a failed start’s message', () => {
  it('gives the server’s words, its code and what to do', () => {
    expect(databaseProblem(fromServer('3D000', 'database "x" does not exist'), 'postgres://db/x')).toBe(
      'the database postgres://db/x refused: database "x" does not exist (3D000); create it (createdb), or name one that exists in the URL',
    );
    expect(databaseProblem(fromServer('28000', 'role "nobody" does not exist'), 'D')).toMatch(
      /; name a role that exists in the URL, or create it$/,
    );
    // The same code for the server's host rules: another fix.
    const hba = fromServer(
      '28000',
      'no pg_hba.conf entry for host "10.0.0.7", user "lh", database "lh", no encryption',
    );
    expect(databaseProblem(hba, 'D')).toMatch(
      /; allow this host in pg_hba\.conf, or connect with TLS \(\?sslmode=require\)$/,
    );
    expect(databaseProblem(fromServer('XX000', 'something else'), 'D')).toBe(
      'the database D refused: something else (XX000)',
    );
  });

  it('names the network’s code when the database did not answer', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(databaseProblem(refused, 'D')).toBe('cannot reach the database D: ECONNREFUSED');
  });
});
