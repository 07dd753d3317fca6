import { describe, expect, it } from 'vitest';
import { migrationSummary, newerSchemaWarning } from './migration-summary.js';

describe('migrationSummary', () => {
  it('lists each migration applied, one a line', () => {
    const report = {
      applied: [
        { version: 15, name: 'endpoint next due' },
        { version: 16, name: 'due index holds leases' },
      ],
      version: 16,
      unknown: [],
    };
    expect(migrationSummary('sqlite:./a.db', report)).toBe(
      'Migrated sqlite:./a.db to schema version 16, applying 2 migrations:\n' +
        '  15  endpoint next due\n  16  due index holds leases\n',
    );
  });

  it('says a single migration as one', () => {
    const report = { applied: [{ version: 16, name: 'x' }], version: 16, unknown: [] };
    expect(migrationSummary('db', report)).toMatch(
      /^Migrated db to schema version 16, applying the migration:\n/,
    );
  });

  it('says when there was nothing to apply', () => {
    expect(migrationSummary('db', { applied: [], version: 16, unknown: [] })).toBe(
      'Migrated db: already at schema version 16, nothing to apply.\n',
    );
  });

  it('says when the database is ahead of this version', () => {
    expect(migrationSummary('db', { applied: [], version: 18, unknown: [17, 18] })).toBe(
      'Migrated db: nothing to apply; it is at schema version 18, newer than this version knows.\n',
    );
  });

  it('falls back to a plain line for a store that reports nothing', () => {
    expect(migrationSummary('db', undefined)).toBe('Migrated db: the schema is up to date.\n');
  });
});

describe('newerSchemaWarning', () => {
  it('names the versions a newer build applied', () => {
    const warning = newerSchemaWarning('db', { applied: [], version: 18, unknown: [17, 18] });
    expect(warning).toMatch(/^db has migrations 17, 18 applied, which this linkhooks-sender does not know/);
  });

  it('says nothing when every version is known, or nothing is reported', () => {
    expect(newerSchemaWarning('db', { applied: [], version: 16, unknown: [] })).toBeUndefined();
    expect(newerSchemaWarning('db', undefined)).toBeUndefined();
  });
});
