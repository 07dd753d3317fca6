/**
 * The PostgreSQL store's connections: the pool, transactions that run again when chosen as a
 * deadlock victim, prepared statements for the hot paths, and the wake-up channel. Every pooled
 * connection starts with `search_path` set to the store's schema, so statements name tables
 * unqualified.
 */
import pg from 'pg';
import type { Row } from '../rows.js';
import { boundedWaits } from './bounded-waits.js';
import { quoteSchema } from './schema-name.js';

export interface PgOptions {
  connectionString: string;
  schema: string;
  poolSize: number;
  applicationName: string;
  /** How long a statement, or a new connection, may go unanswered (QUERY_TIMEOUT_MS unless given). */
  queryTimeoutMs?: number | undefined;
}

/**
 * With connections out of the pools and none given back for this long, the server is taken as
 * silent: their sockets are dropped, and their statements fail. A database that stops answering
 * without closing its connections (a network partition, a fail-over that leaves the old address
 * silent, a stuck proxy) is then "not now" (503, store/unavailable.ts), rather than every request
 * and the shutdown waiting for as long as the silence lasts. A new connection gets as long. One
 * statement that runs longer (a pause's hold over a large backlog, a month's endpoint statistics)
 * is not cut short while the others are answered: a busy process gives connections back every few
 * milliseconds, and its worker claims at least every poll. Migrations run apart (`migrationTx`), as
 * an index built on a large table or a second process waiting for the first's lock may take longer
 * with nothing else to do.
 *
 * One watchdog per store, not a timer per statement: node-postgres's `query_timeout` and pg-pool's
 * `connectionTimeoutMillis` each set a timer for every statement, which measured 1.11–1.18× the
 * service's CPU per event in single-event ingest (bench/service-ab.mjs --postgres --ingest single).
 */
export const QUERY_TIMEOUT_MS = 30_000;

/**
 * How long closing waits for the server to answer a connection's goodbye (it takes milliseconds):
 * 5 s, or the query timeout if shorter. Then the socket is dropped.
 */
export const closeWaitOf = (queryTimeoutMs: number): number => Math.min(queryTimeoutMs, 5_000);

/**
 * Drops a connection's socket at once: for a server that has not answered its goodbye in time (node-postgres keeps the socket as `connection.stream`, with no public way to drop
 * it; its `end` then follows).
 */
function destroySocket(client: pg.ClientBase): void {
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}

/**
 * Drops the sockets of the connections out of `pools` once none has been given back for
 * `timeoutMs` (QUERY_TIMEOUT_MS) while some were out, checked a tenth of it apart; each check also
 * ends the waits for a connection older than that (`expireWaits`, bounded-waits.ts).
 */
function watchSilence(pools: pg.Pool[], timeoutMs: number, expireWaits: (now: number) => void) {
  const out = new Set<pg.PoolClient>();
  // The last time a connection came back, or the first went out after none was.
  let answeredAt = performance.now();
  for (const pool of pools) {
    pool.on('acquire', (client) => {
      if (out.size === 0) answeredAt = performance.now();
      out.add(client);
    });
    pool.on('release', (_error, client) => {
      out.delete(client);
      answeredAt = performance.now();
    });
    pool.on('remove', (client) => out.delete(client as pg.PoolClient));
  }
  const timer = setInterval(
    () => {
      const now = performance.now();
      expireWaits(now);
      if (out.size === 0 || now - answeredAt < timeoutMs) return;
      for (const client of out) destroySocket(client);
      out.clear();
    },
    Math.max(50, timeoutMs / 10),
  );
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** Waits for `ended`; when `ms` pass first, calls `drop` (which makes it end) and waits on. */
async function endedOrDropped(ended: Promise<unknown>, ms: number, drop: () => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), ms);
  });
  try {
    if ((await Promise.race([ended, late])) !== 'late') return;
    drop();
    await ended;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Holds `client` in `making` while its connection is being made, until its 'connect' or its 'end':
 * closing drops those at once, as they have no goodbye to wait for.
 */
export function whileMaking(client: pg.Client, making: Set<pg.ClientBase>): void {
  making.add(client);
  const made = () => making.delete(client);
  client.once('connect', made);
  client.once('end', made);
}

/** Ends a connection of its own (not the pool's), its socket dropped when `ms` pass first. */
export const endClient = (client: pg.Client, ms: number): Promise<void> =>
  endedOrDropped(
    client.end().catch(() => undefined),
    ms,
    () => destroySocket(client),
  );

/**
 * The main pool's connections commit without waiting for the WAL flush (connect); a transaction
 * begun so waits for it, in the one round trip of its BEGIN.
 */
const BEGIN_DURABLE = 'BEGIN; SET LOCAL synchronous_commit TO on';

/** BEGIN … COMMIT on `client`; on an error, ROLLBACK, whose own failure goes to `rollbackFailed`. */
async function inTransaction<C extends pg.ClientBase, T>(
  client: C,
  fn: (client: C) => Promise<T>,
  rollbackFailed: (error: Error) => void,
  begin = 'BEGIN',
): Promise<T> {
  try {
    await client.query(begin);
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(rollbackFailed);
    throw error;
  }
}

export interface Pg {
  readonly pool: pg.Pool;
  /** Base settings for connections outside the pool (the LISTEN connection). */
  readonly config: pg.ClientConfig;
  readonly schema: string;
  /** How long a statement, or a new connection, may go unanswered (QUERY_TIMEOUT_MS). */
  readonly queryTimeoutMs: number;
  /** Runs `fn` in a transaction; again if PostgreSQL aborts it as a deadlock victim. */
  tx<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  /**
   * `tx` whose commit waits for the WAL flush: for every change a user is answered about (an
   * account, a key, an endpoint, a pause, a retry by hand…), which a crash of the database server
   * must not take back once answered. Only claims, attempt records and the background's steps
   * commit without waiting: losing one means work done again (connect).
   */
  durableTx<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  /** One statement in a `durableTx`. */
  durableRows(sql: string, values: unknown[]): Promise<Row[]>;
  /** Runs `run` again, up to three times in all, while PostgreSQL aborts it as a deadlock victim. */
  deadlockRetried<T>(run: () => Promise<T>): Promise<T>;
  /** One statement, committed without waiting for the WAL flush (see durableTx). */
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
  /**
   * Runs `fn` in a transaction on a connection of its own, with no limit on how long a statement
   * may take: for migrations.
   */
  migrationTx<T>(fn: (client: pg.ClientBase) => Promise<T>): Promise<T>;
  /**
   * Ends the pool and waits until every server connection is closed, at most closeWaitOf the query
   * timeout: the sockets of a server that no longer answers are then destroyed.
   */
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
 * The settings of every connection of the store (PLAN_SETTINGS: how it plans; the tests that read
 * its plans set the same).
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
 *
 * No sequential scan where an index serves (design D81): a connection keeps a prepared statement's
 * plan until its tables are next vacuumed or analyzed, and one made while the log was young (a new
 * database, a table of a few pages) scanned the whole table for the ids a claim or a record looks
 * up, each time, while a burst grew it to tens of thousands of rows (a tenant's next delivery
 * waited 0.5 s behind a viral one's backlog on three processes, 0.3 s without). The setting only
 * makes a scan the last choice: a read that no index serves still scans. Migrations keep scans
 * (MIGRATION_PLAN_OPTIONS).
 */
export const PLAN_SETTINGS = {
  plan_cache_mode: 'force_generic_plan',
  jit: 'off',
  enable_seqscan: 'off',
} as const;
const optionsOf = (settings: Record<string, string>) =>
  Object.entries(settings)
    .map(([name, value]) => `-c ${name}=${value}`)
    .join(' ');
const PLAN_OPTIONS = optionsOf(PLAN_SETTINGS);
/** A migration's statements read and rewrite whole tables (an UPDATE joining two), which a scan serves. */
const MIGRATION_PLAN_OPTIONS = optionsOf({ ...PLAN_SETTINGS, enable_seqscan: 'on' });
const sessionSettings = (schema: string, commit: 'on' | 'off', plans = PLAN_OPTIONS) =>
  `-c search_path=${quoteSchema(schema)} -c synchronous_commit=${commit} ${plans}`;

export function connect(options: PgOptions): Pg {
  const config: pg.ClientConfig = {
    connectionString: options.connectionString,
    application_name: options.applicationName,
  };
  const timeoutMs = options.queryTimeoutMs ?? QUERY_TIMEOUT_MS;
  const closeWaitMs = closeWaitOf(timeoutMs);
  // Connections being made: closing drops them at once, as they have no goodbye to wait for, and
  // the pools' own end would wait for them to be made or to time out.
  const connecting = new Set<pg.ClientBase>();
  // A new connection not made within the timeout fails: set on the client, as pg-pool's own
  // option would also time every wait for a pooled connection (bounded-waits.ts times those).
  class BoundedClient extends pg.Client {
    constructor(clientConfig: pg.ClientConfig) {
      super({ ...clientConfig, connectionTimeoutMillis: timeoutMs });
      whileMaking(this, connecting);
    }
  }
  const waits = boundedWaits(timeoutMs);
  const bounded: pg.PoolConfig = {
    ...config,
    keepAlive: true,
    // pg-pool constructs it with the pool's options; its types say it takes none.
    Client: BoundedClient as unknown as new () => pg.ClientBase,
  };
  // Claims and attempt records commit without waiting for the WAL flush: losing one to a crash of
  // the database server only means an attempt is made again, which at-least-once delivery allows.
  // `publish` turns the flush back on for its own transaction: an event is durable when it returns;
  // so does every change a user is answered about (durableTx).
  const pool = waits.pool({
    ...bounded,
    max: options.poolSize,
    options: sessionSettings(options.schema, 'off'),
  });
  // Publishes go out one batch at a time (group commit), so two connections are plenty.
  const durablePool = waits.pool({ ...bounded, max: 2, options: sessionSettings(options.schema, 'on') });
  // An idle connection that dies (server restart, network) is dropped by the pool and replaced on
  // the next query; without a handler its 'error' would crash the process.
  pool.on('error', () => undefined);
  durablePool.on('error', () => undefined);
  // `pool.end()` resolves before the sockets close; `end` waits for them, so a store that has
  // closed holds no server connection any more.
  const open = new Map<Promise<void>, pg.PoolClient>();
  const track = (client: pg.PoolClient) => {
    // A connection that fails under a statement fails the statement, which carries the error; its
    // own 'error' (emitted as well) would otherwise end the process while a transaction holds it,
    // as the pool listens only to the connections it holds idle.
    client.on('error', () => undefined);
    const ended = new Promise<void>((resolve) => client.once('end', () => resolve()));
    open.set(ended, client);
    void ended.then(() => open.delete(ended));
  };
  pool.on('connect', track);
  durablePool.on('connect', track);
  const watchdog = watchSilence([pool, durablePool], timeoutMs, waits.expire);

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
  async function txOnce<T>(fn: (client: pg.PoolClient) => Promise<T>, begin?: string): Promise<T> {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      return await inTransaction(
        client,
        fn,
        (rollbackError) => {
          broken = rollbackError; // the connection is unusable: destroy it rather than pool it
        },
        begin,
      );
    } finally {
      client.release(broken);
    }
  }

  return {
    pool,
    config,
    schema: options.schema,
    queryTimeoutMs: timeoutMs,
    tx: (fn) => deadlockRetried(() => txOnce(fn)),
    durableTx: (fn) => deadlockRetried(() => txOnce(fn, BEGIN_DURABLE)),
    durableRows: (sql, values) =>
      deadlockRetried(() =>
        txOnce(async (client) => (await client.query<Row>(sql, values)).rows, BEGIN_DURABLE),
      ),
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
    async migrationTx(fn) {
      const client = new BoundedClient({
        ...bounded,
        options: sessionSettings(options.schema, 'on', MIGRATION_PLAN_OPTIONS),
      });
      client.on('error', () => undefined); // carried by the statement it fails (track)
      await client.connect();
      try {
        // The error that counts is the first: a failed rollback's is dropped.
        return await deadlockRetried(() => inTransaction(client, fn, () => undefined));
      } finally {
        await endClient(client, closeWaitMs);
      }
    },
    async end() {
      watchdog.stop();
      for (const client of connecting) destroySocket(client);
      const ended = Promise.all([pool.end(), durablePool.end()]).then(() => Promise.all([...open.keys()]));
      // An ended pool serves no wait any more (pg-pool leaves them unanswered).
      waits.failQueued();
      await endedOrDropped(ended, closeWaitMs, () => {
        for (const client of open.values()) destroySocket(client);
      });
    },
  };
}
