/**
 * Fresh PostgreSQL schemas for one test file (design C7), all dropped at its end.
 *
 * @example
 * const schemas = pgSchemas('lh_ops'); afterAll(schemas.drop);
 * const store = createPostgresStore({ connectionString: PG_URL, schema: schemas.fresh() });
 */
import pg from 'pg';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { PG_URL } from './services.js';

export function pgSchemas(prefix: string) {
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
  const made: string[] = [];
  const fresh = (): string => {
    const schema = `${prefix}_${process.pid}_${made.length}`;
    made.push(schema);
    return schema;
  };
  return {
    /** A pool on the test database, for queries the store does not expose. */
    admin,
    fresh,
    /** A fresh schema with the store's tables, for tests that fill them by SQL. */
    async migrated(): Promise<string> {
      const schema = fresh();
      const store = createPostgresStore({ connectionString: PG_URL, schema, poolSize: 1 });
      await store.migrate();
      await store.close();
      return schema;
    },
    async drop(): Promise<void> {
      for (const schema of made) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    },
  };
}
