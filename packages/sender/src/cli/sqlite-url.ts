/** The file a `--db` URL names for SQLite (`sqlite:<file>`), or undefined for a PostgreSQL URL. */
export const sqliteFileOf = (db: string): string | undefined =>
  db.startsWith('sqlite:') ? db.slice('sqlite:'.length) : undefined;
