// A store's own cost per delivery, no request sent: each round publishes 625 clicks to 8 endpoints
// (5,000 deliveries, concurrently, as group commit takes them; `--endpoints=N` spreads them over N;
// `--at-once` creates a round's events in one millisecond, as a batch request's are),
// then claims them 32 at a time on two lanes and records each one delivered, as a worker does. Two stores, rounds alternated in one run:
// the base, as `migrate` leaves it, and the variant, with the SQL given on the command line applied
// after `migrate` (a schema change to weigh), or run by another build of the store
// (LINKHOOKS_BENCH_VARIANT_DIST: a build's dist/ copied aside in this package, as dist-old/; two
// builds compare). Events are created a millisecond apart, as a service ingesting a thousand a
// second makes them, so ids and due times arrive in the order a service's do.
//
// PostgreSQL (the default): two schemas; prints the database server's CPU per delivery (its
// processes on this machine, bench/cpu-meter.mjs). SQLite (`--sqlite`): two files; prints this
// process's CPU per delivery (the store runs in it, its threads included), its write calls per
// delivery, and at the end the WAL's frames by the table or index whose page each one rewrote
// (bench/wal-frames.mjs); on PostgreSQL, the WAL records of each side's last round per delivery, by
// kind and by table or index (bench/wal-records.mjs). Both print each round's time, medians and ranges, and the variant over the
// base (the median of per-round ratios).
//
//   node bench/store-cycle.mjs [--sqlite] [--endpoints=N] [--at-once] "<SQL applied to the variant>"
//   LINKHOOKS_BENCH_VARIANT_DIST=dist-old node bench/store-cycle.mjs [--sqlite] [--endpoints=N] [--at-once]
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPostgresStore, createSqliteStore } from '@linkhooks/sender';
import Database from 'better-sqlite3';
import pg from 'pg';
import { startCpuMeter } from './cpu-meter.mjs';
import {
  check,
  cleanup,
  fmtInt,
  fmtRange,
  median,
  monotonicMs,
  onCleanup,
  PG_URL,
  pairedRatio,
  tempDir,
} from './harness.mjs';
import { addEndpoints, buildAt, recordDelivered } from './store-bench.mjs';
import { walFramesByTree } from './wal-frames.mjs';
import { walRecordCounter } from './wal-records.mjs';

/** `--endpoints=N` (8 unless given): a round's 5,000 deliveries spread over N endpoints, 5,000 / N events each. */
const endpointsArg = process.argv.find((arg) => arg.startsWith('--endpoints='));
const endpoints = endpointsArg ? Number(endpointsArg.slice('--endpoints='.length)) : 8;
check(Number.isInteger(endpoints) && endpoints >= 1 && endpoints <= 5_000, '--endpoints=N takes 1 to 5,000');
/**
 * `--at-once`: a round's events all created in one millisecond, as a batch request's are, their ids
 * in the order made (as the service's newId makes them: the random part counts up).
 */
const atOnce = process.argv.includes('--at-once');
const CYCLE = {
  events: Math.round(5_000 / endpoints),
  endpoints,
  limit: 32,
  lanes: 2,
  warmupRounds: 2,
  rounds: 30,
};
const BODY = Buffer.alloc(1024, 0x20);

const sqlite = process.argv.includes('--sqlite');
const variantSql = process.argv.slice(2).find((arg) => !arg.startsWith('--'));
const variantDist = process.env.LINKHOOKS_BENCH_VARIANT_DIST;
check(
  variantSql || variantDist,
  'usage: node bench/store-cycle.mjs [--sqlite] [--endpoints=N] [--at-once] "<SQL applied to the variant>", or LINKHOOKS_BENCH_VARIANT_DIST=<another build\'s dist/>',
);
const build = variantDist ? await buildAt(variantDist) : { createPostgresStore, createSqliteStore };

// Ids in the store's form: a prefix, 10 characters of time, 16 random ones (Crockford base32).
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** `n` as `count` digits, the most significant first (as the store's idDigits writes them). */
const digits = (n, count) => {
  let s = '';
  for (let i = 0; i < count; i++, n = Math.floor(n / 32)) s = CROCKFORD[n % 32] + s;
  return s;
};
const newId = (prefix, now) =>
  `${prefix}_${digits(now, 10)}${[...randomBytes(16)].map((b) => CROCKFORD[b % 32]).join('')}`;

/** The `n`th id of `prefix` made at `now` (--at-once): ids of one millisecond in the order made. */
const countedId = (prefix, now, n) => `${prefix}_${digits(now, 10)}${digits(n, 16)}`;
let nextDelivery = 0;

// No receiver: startCpuMeter reads one, and here it spends nothing.
const noReceiver = { stats: async () => ({ cpuUs: 0 }) };

/** The server's WAL position now (`pg_lsn` text). */
const walPosition = async (admin) =>
  (await admin.query('SELECT pg_current_wal_insert_lsn() AS at')).rows[0].at;

/** A PostgreSQL store on a fresh schema, dropped at the end (on error and on Ctrl-C too: harness.mjs). */
async function openSchema(admin, schema, sql, create = createPostgresStore) {
  onCleanup(() => admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
  const store = create({ connectionString: PG_URL, schema, poolSize: 8 });
  onCleanup(() => store.close());
  await store.migrate();
  if (sql) await admin.query(`SET search_path = "${schema}"; ${sql}; RESET search_path`);
  return { ...(await withEndpoints(store)), admin, schema };
}

/** A SQLite store on a fresh file, the SQL applied through a connection of its own. */
async function openFile(file, sql, create = createSqliteStore) {
  const store = create({ filename: file });
  onCleanup(() => store.close());
  await store.migrate();
  if (sql) {
    const db = new Database(file);
    try {
      db.exec(sql);
    } finally {
      db.close();
    }
  }
  return { ...(await withEndpoints(store)), file };
}

async function withEndpoints(store) {
  const accountId = 'acct_cycle';
  const ids = Array.from({ length: CYCLE.endpoints }, () => newId('ep', Date.now()));
  await addEndpoints(store, accountId, ids);
  return { store, accountId };
}

/** The first event's time in the next round: a round's events are a millisecond apart. */
let nextRoundAt = Date.now() - 3_600_000;

/** This process's write calls so far (`syscw` of /proc/self/io): SQLite writes each WAL frame in two. */
const writeCalls = () => Number(/syscw: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))[1]);

/** What this process spent on the CPU since `start`, in µs: a SQLite store's threads run in it. */
function startProcessMeter() {
  const cpu = process.cpuUsage();
  const writes = writeCalls();
  return async () => {
    const spent = process.cpuUsage(cpu);
    return { cpuUs: spent.user + spent.system, writes: writeCalls() - writes };
  };
}

async function round({ store, accountId, admin }) {
  const wal = admin ? { from: await walPosition(admin) } : null;
  const first = nextRoundAt;
  nextRoundAt += CYCLE.events;
  const now = first + CYCLE.events;
  const stop = sqlite ? startProcessMeter() : await startCpuMeter(noReceiver, 'PostgreSQL');
  const started = monotonicMs();
  await Promise.all(
    Array.from({ length: CYCLE.events }, (_, i) =>
      store.publish(
        {
          id: atOnce ? countedId('evt', first, i) : newId('evt', first + i),
          accountId,
          name: 'click',
          body: BODY,
          createdAt: atOnce ? first : first + i,
        },
        () => (atOnce ? countedId('dlv', first, nextDelivery++) : newId('dlv', first + i)),
      ),
    ),
  );
  let delivered = 0;
  const lane = async () => {
    for (;;) {
      const claimed = await store.claimDue({ now, limit: CYCLE.limit, leaseMs: 60_000, perEndpointCap: 8 });
      if (claimed.length === 0) return;
      delivered += claimed.length;
      await recordDelivered(store, claimed, now);
    }
  };
  await Promise.all(Array.from({ length: CYCLE.lanes }, lane));
  const ms = monotonicMs() - started;
  const spent = await stop();
  check(delivered === CYCLE.events * CYCLE.endpoints, `a round delivered ${delivered}`);
  if (sqlite) return { ms, cpuUs: spent.cpuUs / delivered, writes: spent.writes / delivered };
  check(Number.isFinite(spent.serverUs), 'no PostgreSQL process on this machine to measure');
  wal.to = await walPosition(admin);
  return { ms, cpuUs: spent.serverUs / delivered, wal, delivered };
}

/** The two stores: schemas of one PostgreSQL database, or files of a temporary folder. */
async function openSides() {
  if (sqlite) {
    const dir = tempDir('linkhooks-store-cycle-');
    return {
      base: await openFile(join(dir, 'base.db')),
      variant: await openFile(join(dir, 'variant.db'), variantSql, build.createSqliteStore),
    };
  }
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  onCleanup(() => admin.end());
  return {
    base: await openSchema(admin, `bench_cycle_base_${process.pid}`),
    variant: await openSchema(
      admin,
      `bench_cycle_variant_${process.pid}`,
      variantSql,
      build.createPostgresStore,
    ),
  };
}

const samples = { base: [], variant: [] };
const walFrames = {};
const walRecords = {};

/**
 * The WAL records of `side`'s last round per delivery, by kind and by table or index, largest
 * first; null where pg_waldump cannot read the server's WAL here (wal-records.mjs).
 */
async function walRecordsOf({ admin, schema }, { wal, delivered }) {
  const counts = await (await walRecordCounter(admin)).recordsByRelation(wal.from, wal.to);
  if (counts === null) return null;
  const { rows } = await admin.query(
    `SELECT pg_relation_filenode(c.oid)::text AS node, c.relname AS name
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1`,
    [schema],
  );
  const names = new Map(rows.map((r) => [r.node, r.name]));
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const kinds = [...counts]
    .map(([key, n]) => {
      const [kind, node] = key.split(' ');
      return { kind, relation: names.get(node) ?? `another schema's or the catalog's (${node})`, n };
    })
    .sort((a, b) => b.n - a.n);
  return { perDelivery: total / delivered, kinds, delivered };
}
try {
  const sides = await openSides();
  for (let r = 0; r < CYCLE.warmupRounds + CYCLE.rounds; r++) {
    // Each side first in every other round: neither always runs on the other's leftovers.
    for (const side of r % 2 ? ['base', 'variant'] : ['variant', 'base']) {
      const result = await round(sides[side]);
      if (r >= CYCLE.warmupRounds) samples[side].push(result);
    }
  }
  for (const side of sqlite ? [] : ['base', 'variant']) {
    walRecords[side] = await walRecordsOf(sides[side], samples[side].at(-1));
  }
  for (const side of sqlite ? ['base', 'variant'] : []) {
    try {
      walFrames[side] = walFramesByTree(sides[side].file);
    } catch (error) {
      console.error(`the ${side} file's WAL could not be read: ${error.message}`); // the figures stand
    }
  }
} finally {
  await cleanup();
}

console.log(
  `${sqlite ? 'SQLite' : 'PostgreSQL'} store, ${fmtInt(CYCLE.events * CYCLE.endpoints)} deliveries to ${fmtInt(CYCLE.endpoints)} endpoints a round published, claimed and recorded; median of ${CYCLE.rounds} rounds each, alternated`,
);
const rows = [
  [sqlite ? 'CPU per delivery (process)' : 'database CPU per delivery', 'µs', (s) => s.cpuUs],
  ...(sqlite ? [['write calls per delivery', '', (s) => s.writes]] : []),
  ['round', 'ms', (s) => s.ms],
];
const fmt = (n) => (n < 100 ? n.toFixed(1) : fmtInt(n));
for (const [name, unit, of] of rows) {
  const base = samples.base.map(of);
  const variant = samples.variant.map(of);
  console.log(
    `  ${name.padEnd(28)} base ${fmt(median(base))}${unit && ` ${unit}`} (${fmtRange(base, fmt)}), variant ${fmt(median(variant))}${unit && ` ${unit}`} (${fmtRange(variant, fmt)}): ${pairedRatio(variant, base).toFixed(2)}× (median of per-round ratios)`,
  );
}
for (const side of Object.keys(walFrames)) {
  const { frames, trees } = walFrames[side];
  console.log(
    `  ${side}: the WAL's last ${fmtInt(frames)} frames (pages written by commits), by table or index`,
  );
  for (const tree of trees.slice(0, 12)) {
    const share = `${((100 * tree.frames) / frames).toFixed(1)}%`;
    console.log(`    ${share.padStart(6)}  ${tree.name} (${fmtInt(tree.pages)} pages)`);
  }
}
for (const side of Object.keys(walRecords)) {
  const wal = walRecords[side];
  if (wal === null) {
    console.log(`  ${side}: the WAL's records could not be read here (pg_waldump, the server's files)`);
    continue;
  }
  console.log(
    `  ${side}: ${wal.perDelivery.toFixed(1)} WAL records touching a table or index per delivery in its last round, by kind and by the table or index of their first block`,
  );
  for (const { kind, relation, n } of wal.kinds.filter((k) => k.n / wal.delivered >= 0.05)) {
    console.log(`    ${(n / wal.delivered).toFixed(2).padStart(6)}  ${kind.padEnd(20)} ${relation}`);
  }
}
