// A store of one build filled in SQL, as the benches that need a large log before they start make
// it: on PostgreSQL a schema of its own, dropped at the end; on SQLite a file in a folder of its
// own, written before the store opens it. `fill(series)` answers the statements, in SQL both stores
// take, where `series(n)` is a table of `i` from 0 to n - 1.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { pgSchemaName } from './claims.mjs';
import { onCleanup, PG_URL, tempDir } from './harness.mjs';

/**
 * `build`: the build's exports (`createPostgresStore`, `createSqliteStore`); `what` names the
 * schema or folder; `analyzed`: the tables PostgreSQL's planner is told of once filled.
 */
export async function openFilledStore(build, { postgres, what, fill, analyzed = ['deliveries'] }) {
  if (postgres) {
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    onCleanup(() => admin.end());
    const schema = pgSchemaName(what);
    onCleanup(() => admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
    const store = build.createPostgresStore({ connectionString: PG_URL, schema });
    await store.migrate();
    for (const sql of fill((n) => `generate_series(0, ${n - 1}) AS s (i)`)) {
      await admin.query(`SET search_path TO "${schema}"; ${sql}`);
    }
    await admin.query(`VACUUM ANALYZE ${analyzed.map((table) => `"${schema}".${table}`).join(', ')}`);
    return store;
  }
  const file = join(tempDir(`linkhooks-bench-${what}-`), 'store.db');
  const setup = build.createSqliteStore({ filename: file });
  await setup.migrate();
  await setup.close();
  const raw = new Database(file);
  const series = (n) =>
    `(WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ${n}) SELECT i FROM n)`;
  raw.transaction(() => {
    for (const sql of fill(series)) raw.exec(sql);
  })();
  raw.close();
  return build.createSqliteStore({ filename: file });
}
