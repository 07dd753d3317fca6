/** A `postgres://` URL as `--db` takes it: one rule for the command line and for opening the store. */
import { isSchemaName } from '../store/postgres/schema-name.js';

/** What is wrong with a `postgres://` URL, or null; never repeats it (it may hold a password). */
export function postgresUrlProblem(db: string): string | null {
  let url: URL;
  try {
    url = new URL(db);
  } catch {
    return 'is not a valid PostgreSQL URL';
  }
  const schema = url.searchParams.get('schema');
  if (schema !== null && !isSchemaName(schema)) {
    return 'has a ?schema= that is not a lowercase identifier ([a-z_][a-z0-9_]*, at most 63 characters)';
  }
  return null;
}
