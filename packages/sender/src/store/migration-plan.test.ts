import { describe, expect, it } from 'vitest';
import { planMigrations } from './migration-plan.js';

const KNOWN = [
  { version: 3, name: 'three', sql: 'c' },
  { version: 1, name: 'one', sql: 'a' },
  { version: 2, name: 'two', sql: 'b' },
];

describe('planMigrations', () => {
  it('applies every migration of a new database, by number', () => {
    const { pending, report } = planMigrations(KNOWN, []);
    expect(pending.map((m) => m.sql)).toEqual(['a', 'b', 'c']);
    expect(report).toEqual({
      applied: [
        { version: 1, name: 'one' },
        { version: 2, name: 'two' },
        { version: 3, name: 'three' },
      ],
      version: 3,
      unknown: [],
    });
  });

  it('applies only what is missing, a gap included, and reports the highest version recorded', () => {
    const { pending, report } = planMigrations(KNOWN, [1, 3]);
    expect(pending.map((m) => m.version)).toEqual([2]);
    expect(report).toEqual({ applied: [{ version: 2, name: 'two' }], version: 3, unknown: [] });
  });

  it('applies nothing to a database that has them all', () => {
    expect(planMigrations(KNOWN, [3, 2, 1]).report).toEqual({ applied: [], version: 3, unknown: [] });
  });

  it('names the versions a newer build applied, and counts them in the version', () => {
    const { pending, report } = planMigrations(KNOWN, [1, 2, 3, 5, 4]);
    expect(pending).toEqual([]);
    expect(report).toEqual({ applied: [], version: 5, unknown: [4, 5] });
  });

  it('says version 0 of an empty database with nothing known', () => {
    expect(planMigrations([], []).report).toEqual({ applied: [], version: 0, unknown: [] });
  });
});
