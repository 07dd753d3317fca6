// The PostgreSQL store's own cost per delivery, no request sent: each round publishes 625 clicks to
// 8 endpoints (5,000 deliveries, concurrently, as group commit takes them), then claims them 32 at a
// time on two lanes and records each one delivered, as a worker does. Two schemas, rounds
// alternated in one run: the base, as `migrate` leaves it, and the variant, with the SQL given on
// the command line applied after `migrate` (a schema change to weigh), or run by another build of
// the store (LINKHOOKS_BENCH_VARIANT_DIST: a build's dist/ copied aside in this package, as
// dist-old/; two builds compare). Prints the database server's CPU per delivery (its processes on
// this machine, bench/cpu-meter.mjs) and each round's time, medians and ranges, and the variant over
// the base (the median of per-round ratios).
//
//   node bench/store-cycle.mjs "<SQL applied to the variant schema>"
//   LINKHOOKS_BENCH_VARIANT_DIST=dist-old node bench/store-cycle.mjs
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createPostgresStore, DEFAULT_DISABLE_POLICY, RETRY_DELAYS_MS } from '@linkhooks/sender';
import pg from 'pg';
import { startCpuMeter } from './cpu-meter.mjs';
import { check, cleanup, fmtInt, fmtRange, median, monotonicMs, onCleanup, pairedRatio } from './harness.mjs';

const PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const CYCLE = { events: 625, endpoints: 8, limit: 32, lanes: 2, warmupRounds: 2, rounds: 30 };
const RULES = { schedule: { delaysMs: RETRY_DELAYS_MS }, policy: DEFAULT_DISABLE_POLICY };
const BODY = Buffer.alloc(1024, 0x20);

/** This package's folder: a variant build's path is read from it, wherever the bench runs from. */
const PACKAGE = fileURLToPath(new URL('..', import.meta.url));
const variantSql = process.argv[2];
const variantDist = process.env.LINKHOOKS_BENCH_VARIANT_DIST;
check(
  variantSql || variantDist,
  'usage: node bench/store-cycle.mjs "<SQL applied to the variant schema>", or LINKHOOKS_BENCH_VARIANT_DIST=<another build\'s dist/>',
);
const createVariantStore = variantDist
  ? (await import(pathToFileURL(join(resolve(PACKAGE, variantDist), 'index.js')).href)).createPostgresStore
  : createPostgresStore;

// Ids in the store's form: a prefix, 10 characters of time, 16 random ones (Crockford base32).
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const newId = (prefix, now) => {
  let time = '';
  for (let t = now, i = 0; i < 10; i++, t = Math.floor(t / 32)) time = CROCKFORD[t % 32] + time;
  const random = [...randomBytes(16)].map((b) => CROCKFORD[b % 32]).join('');
  return `${prefix}_${time}${random}`;
};

// No receiver: startCpuMeter reads one, and here it spends nothing.
const noReceiver = { stats: async () => ({ cpuUs: 0 }) };

/** A store on a fresh schema, dropped at the end (on error and on Ctrl-C too: harness.mjs). */
async function openSchema(admin, schema, sql, create = createPostgresStore) {
  onCleanup(() => admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
  const store = create({ connectionString: PG_URL, schema, poolSize: 8 });
  onCleanup(() => store.close());
  await store.migrate();
  if (sql) await admin.query(`SET search_path = "${schema}"; ${sql}; RESET search_path`);
  const accountId = 'acct_cycle';
  for (let i = 0; i < CYCLE.endpoints; i++) {
    await store.createEndpoint({
      id: newId('ep', Date.now()),
      accountId,
      url: `https://127.0.0.1/hooks/${i}`,
      events: ['click'],
      secret: 'whsec_bench_not_a_secret',
      description: null,
      now: Date.now(),
    });
  }
  return { store, accountId };
}

async function round({ store, accountId }) {
  const now = Date.now();
  const stop = await startCpuMeter(noReceiver, 'PostgreSQL');
  const started = monotonicMs();
  await Promise.all(
    Array.from({ length: CYCLE.events }, () =>
      store.publish({ id: newId('evt', now), accountId, name: 'click', body: BODY, createdAt: now }, () =>
        newId('dlv', now),
      ),
    ),
  );
  let delivered = 0;
  const lane = async () => {
    for (;;) {
      const claimed = await store.claimDue({ now, limit: CYCLE.limit, leaseMs: 60_000, perEndpointCap: 8 });
      if (claimed.length === 0) return;
      delivered += claimed.length;
      const records = await Promise.all(
        claimed.map((c) =>
          store.recordAttempt({
            lease: { deliveryId: c.delivery.id, leaseToken: c.leaseToken },
            attempt: {
              deliveryId: c.delivery.id,
              number: 1,
              startedAt: now,
              durationMs: 1,
              statusCode: 200,
              failureKind: null,
              errorMessage: null,
              responseSnippet: null,
              requestHeaders: { 'content-type': 'application/json' },
            },
            rules: RULES,
            now,
          }),
        ),
      );
      check(
        records.every((r) => r.applied),
        'an attempt was not recorded',
      );
    }
  };
  await Promise.all(Array.from({ length: CYCLE.lanes }, lane));
  const ms = monotonicMs() - started;
  const { serverUs } = await stop();
  check(delivered === CYCLE.events * CYCLE.endpoints, `a round delivered ${delivered}`);
  check(Number.isFinite(serverUs), 'no PostgreSQL process on this machine to measure');
  return { ms, serverUs: serverUs / delivered };
}

const admin = new pg.Client({ connectionString: PG_URL });
await admin.connect();
onCleanup(() => admin.end());
const samples = { base: [], variant: [] };
try {
  const sides = {
    base: await openSchema(admin, `bench_cycle_base_${process.pid}`),
    variant: await openSchema(admin, `bench_cycle_variant_${process.pid}`, variantSql, createVariantStore),
  };
  for (let r = 0; r < CYCLE.warmupRounds + CYCLE.rounds; r++) {
    // Each side first in every other round: neither always runs on the other's leftovers.
    for (const side of r % 2 ? ['base', 'variant'] : ['variant', 'base']) {
      const result = await round(sides[side]);
      if (r >= CYCLE.warmupRounds) samples[side].push(result);
    }
  }
} finally {
  await cleanup();
}

console.log(
  `PostgreSQL store, ${fmtInt(CYCLE.events * CYCLE.endpoints)} deliveries a round published, claimed and recorded; median of ${CYCLE.rounds} rounds each, alternated`,
);
const rows = [
  ['database CPU per delivery', 'µs', (s) => s.serverUs],
  ['round', 'ms', (s) => s.ms],
];
for (const [name, unit, of] of rows) {
  const base = samples.base.map(of);
  const variant = samples.variant.map(of);
  console.log(
    `  ${name.padEnd(28)} base ${fmtInt(median(base))} ${unit} (${fmtRange(base)}), variant ${fmtInt(median(variant))} ${unit} (${fmtRange(variant)}): ${pairedRatio(variant, base).toFixed(2)}× (median of per-round ratios)`,
  );
}
