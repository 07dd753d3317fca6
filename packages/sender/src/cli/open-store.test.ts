import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { maskDb, postgresOptions } from './open-store.js';

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
});
