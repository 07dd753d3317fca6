/**
 * What `migrate` prints of a run (MigrationReport), and the warning `migrate`, `serve` and `worker`
 * give when the database was migrated by a newer linkhooks-sender: a deploy's log then says whether
 * the schema changed, and a rollback says what it runs on.
 */
import type { MigrationReport } from '../store/migration-plan.js';

/** `migrate`'s lines for `db` (masked): the migrations applied, one a line, or that there were none. */
export function migrationSummary(db: string, report: MigrationReport | undefined): string {
  if (!report) return `Migrated ${db}: the schema is up to date.\n`;
  const { applied, version, unknown } = report;
  if (applied.length === 0) {
    return unknown.length === 0
      ? `Migrated ${db}: already at schema version ${version}, nothing to apply.\n`
      : `Migrated ${db}: nothing to apply; it is at schema version ${version}, newer than this version knows.\n`;
  }
  const lines = applied.map((m) => `  ${m.version}  ${m.name}\n`).join('');
  const count = applied.length === 1 ? 'the migration' : `${applied.length} migrations`;
  return `Migrated ${db} to schema version ${version}, applying ${count}:\n${lines}`;
}

/** Said when the database holds migrations this build does not know; `undefined` otherwise. */
export function newerSchemaWarning(db: string, report: MigrationReport | undefined): string | undefined {
  if (!report || report.unknown.length === 0) return undefined;
  const versions = report.unknown.join(', ');
  return (
    `${db} has migration${report.unknown.length === 1 ? '' : 's'} ${versions} applied, which this ` +
    'linkhooks-sender does not know: a newer version migrated it. This version runs on it anyway, ' +
    "as after a rollback; if that version's release notes say otherwise, run that version instead."
  );
}
