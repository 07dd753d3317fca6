/**
 * Which numbered migrations a run applies, and what it tells of the database: one rule for both
 * stores. By number, each recorded on its own: numbers may have gaps, and a database may have a
 * later one applied before an earlier one is added. A version recorded that this build does not
 * know was applied by a newer build (a rollback after its migration): the run applies the rest and
 * says so, rather than refusing, since a release's migrations are meant to leave the schema usable
 * by the release before it.
 */

export interface Migration {
  version: number;
  name: string;
}

/** What `migrate()` did: the migrations it applied, in order, and what the database holds now. */
export interface MigrationReport {
  applied: Migration[];
  /** The highest version recorded once the run is done (0 for a database with none). */
  version: number;
  /** Versions recorded in the database that this build has no migration for, ascending. */
  unknown: number[];
}

/** The migrations of `known` that `recorded` lacks, in order, and the report once they are applied. */
export function planMigrations<M extends Migration>(
  known: readonly M[],
  recorded: Iterable<number>,
): { pending: M[]; report: MigrationReport } {
  const have = new Set(recorded);
  const pending = [...known].filter((m) => !have.has(m.version)).sort((a, b) => a.version - b.version);
  const knownVersions = new Set(known.map((m) => m.version));
  const unknown = [...have].filter((v) => !knownVersions.has(v)).sort((a, b) => a - b);
  const version = Math.max(0, ...have, ...pending.map((m) => m.version));
  return {
    pending,
    report: { applied: pending.map(({ version: v, name }) => ({ version: v, name })), version, unknown },
  };
}
