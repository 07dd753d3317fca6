/**
 * The PostgreSQL store's connections: the pool, transactions that run again when chosen as a
 * deadlock victim, prepared statements for the hot paths, and the wake-up channel. Every pooled
 * connection starts with `search_path` set to the store's schema, so statements name tables
 * unqualified.
 */
import pg from 'pg';
import type { Row } from '../rows.js';
import { quoteSchema } from './schema-name.js';

export interface PgOptions {
  connectionString: string;
  schema: string;
  poolSize: number;
  applicationName: string;
}

export interface Pg {
  readonly pool: pg.Pool;
  /** Base settings for connections outside the pool (the LISTEN connection). */
  readonly config: pg.ClientConfig;
  readonly schema: string;
  /** Runs `fn` in a transaction; again if PostgreSQL aborts it as a deadlock victim. */
  tx<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  /** Runs `run` again, up to three times in all, while PostgreSQL aborts it as a deadlock victim. */
  deadlockRetried<T>(run: () => Promise<T>): Promise<T>;
  rows(sql: string, values: unknown[]): Promise<Row[]>;
  /**
   * A named (prepared) statement: parsed and planned once per connection instead of on every
   * call. Only for the hot paths (claim, record): their CTEs cost more to plan than to run.
   */
  prepared(name: string, text: string, values: unknown[]): Promise<Row[]>;
  /**
   * A prepared statement whose rows come in PostgreSQL's binary format: a bytea column as its
   * bytes, where the text format sends hex, twice the bytes, for this thread to decode. The driver
   * reads every column as UTF-8 text on the way: bytes that are not UTF-8 come back altered, each
   * such sequence as U+FFFD, which the caller checks for (an event's body, its JSON encoded by
   * eventBytes, always is UTF-8).
   */
  preparedBinary(name: string, text: string, values: unknown[]): Promise<Row[]>;
  /**
   * A prepared statement on a connection that waits for the WAL flush at commit: for publishes,
   * which are answered only once durable (design I2).
   */
  durable(name: string, text: string, values: unknown[]): Promise<Row[]>;
  /** Ends the pool and waits until every server connection is closed. */
  end(): Promise<void>;
}

const BYTEA_OID = 17;
/**
 * The binary format's parsers: node-postgres's own, but a bytea stays the Buffer it gives (its own
 * parser would make it a string).
 */
const BINARY_TYPES = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === BYTEA_OID && format === 'binary' ? (value: Buffer) => value : pg.types.getTypeParser(oid, format),
};

/** Wakes every listening worker when the transaction commits (the payload is the schema). */
export const NOTIFY_DUE = `SELECT pg_notify('linkhooks_due', $1)`;
export const DUE_CHANNEL = 'linkhooks_due';

/**
 * The settings of every connection of the store.
 *
 * The prepared statements (claim, record) always run their generic plan: it walks the due-time
 * index in order and stops after the claim window, whatever the table holds. Left to choose,
 * PostgreSQL re-plans the claim on every call once a million retries wait in the future (their
 * estimate makes the generic plan look dear), which made a claim ~1.6× slower than with a
 * thousand. The mode holds for the unnamed statements `rows` sends too: the log's pages are
 * written so that their generic plan reads only the page (delivery-log.ts).
 *
 * No JIT: a generic plan is estimated for any values, and the claim's, which allows for a read per
 * endpoint, costs more than `jit_above_cost` once a million retries wait; each claim then compiled
 * its plan (130 ms, for a statement that runs in 2 ms).
 */
const sessionSettings = (schema: string, commit: 'on' | 'off') =>
  `-c search_path=${quoteSchema(schema)} -c synchronous_commit=${commit} -c plan_cache_mode=force_generic_plan -c jit=off`;

export function connect(options: PgOptions): Pg {
  const config: pg.ClientConfig = {
    connectionString: options.connectionString,
    application_name: options.applicationName,
  };
  // Claims and attempt records commit without waiting for the WAL flush: losing one to a crash of
  // the database server only means an attempt is made again, which at-least-once delivery allows.
  // `publish` turns the flush back on for its own transaction: an event is durable when it returns.
  const pool = new pg.Pool({
    ...config,
    max: options.poolSize,
    options: sessionSettings(options.schema, 'off'),
  });
  // Publishes go out one batch at a time (group commit), so two connections are plenty.
  const durablePool = new pg.Pool({ ...config, max: 2, options: sessionSettings(options.schema, 'on') });
  // An idle connection that dies (server restart, network) is dropped by the pool and replaced on
  // the next query; without a handler its 'error' would crash the process.
  pool.on('error', () => undefined);
  durablePool.on('error', () => undefined);
  // `pool.end()` resolves before the sockets close; `end` waits for them, so a store that has
  // closed holds no server connection any more.
  const open = new Set<Promise<void>>();
  const track = (client: pg.PoolClient) => {
    const ended = new Promise<void>((resolve) => client.once('end', () => resolve()));
    open.add(ended);
    void ended.then(() => open.delete(ended));
  };
  pool.on('connect', track);
  durablePool.on('connect', track);

  // The lock orders are consistent where they can be (delivery before lease, deliveries in id
  // order), but a disabling or a deletion locks its endpoint before its deliveries and a batched
  // record the other way round, and the holds of a disabling, a pause or a re-enabling lock an
  // endpoint's deliveries in no set order, which a renewal or a deletion can meet; two publishes
  // can each hold a due entry's share lock the other's insert waits for (publish.ts). A victim was
  // rolled back whole, so running it again is safe.
  async function deadlockRetried<T>(run: () => Promise<T>, tries = 3): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await run();
      } catch (error) {
        if ((error as { code?: string }).code !== '40P01' || attempt >= tries) throw error;
      }
    }
  }

  /** BEGIN … COMMIT on one connection; ROLLBACK on error; the connection always goes back. */
  async function txOnce<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => {
        broken = rollbackError; // the connection is unusable: destroy it rather than pool it
      });
      throw error;
    } finally {
      client.release(broken);
    }
  }

  return {
    pool,
    config,
    schema: options.schema,
    tx: (fn) => deadlockRetried(() => txOnce(fn)),
    deadlockRetried,
    rows: async (sql, values) => (await pool.query<Row>(sql, values)).rows,
    prepared: async (name, text, values) =>
      (await pool.query<Row>({ name: `linkhooks_${name}`, text, values })).rows,
    preparedBinary: async (name, text, values) => {
      // `binary` is node-postgres's (Query reads it), missing from its types.
      const query = { name: `linkhooks_${name}`, text, values, binary: true, types: BINARY_TYPES };
      return (await pool.query<Row>(query as pg.QueryConfig)).rows;
    },
    durable: (name, text, values) =>
      deadlockRetried(
        async () => (await durablePool.query<Row>({ name: `linkhooks_${name}`, text, values })).rows,
      ),
    async end() {
      await Promise.all([pool.end(), durablePool.end()]);
      await Promise.all([...open]);
    },
  };
}
