// A claim's cost with the event bodies it hands out, no request sent: each round publishes 4
// events to 8 endpoints (`--endpoints=N`: 32 / N events to N) and claims their 32 deliveries in one
// call, as a worker's batch takes a click fanned out, then records them. Printed, for bodies of
// 1 KiB and of 256 KiB (an ingest request's largest), the claim's time and this process's CPU in
// it (the event loop is held for it on SQLite, and on PostgreSQL while the rows are parsed):
// medians of the rounds after two warm-up ones, with their ranges. With LINKHOOKS_BENCH_VARIANT_DIST (another build's dist/ copied aside in this
// package, as dist-old/), that build's store runs beside this one's, rounds alternated, and the
// variant over this build is the median of per-round ratios.
//
//   node bench/claim-bodies.mjs [--postgres] [--endpoints=N]
//   LINKHOOKS_BENCH_VARIANT_DIST=dist-old node bench/claim-bodies.mjs [--postgres] [--endpoints=N]
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { pgSchemaName } from './claims.mjs';
import {
  check,
  cleanup,
  fmtMs,
  fmtRange,
  median,
  onCleanup,
  PG_URL,
  pairedRatio,
  tempDir,
} from './harness.mjs';
import { addEndpoints, buildAt, recordDelivered } from './store-bench.mjs';

const postgres = process.argv.slice(2).includes('--postgres');
const ROUNDS = 24;
const WARMUP = 2;
/** A claim's deliveries: a worker's batch. */
const CLAIMED = 32;
// --endpoints=N: each event to N endpoints (8 by default; 1, no fan-out, makes every body a claim hands out another).
const args = process.argv.slice(2);
check(
  args.every((a) => a === '--postgres' || a.startsWith('--endpoints=')),
  'usage: node bench/claim-bodies.mjs [--postgres] [--endpoints=N]',
);
const endpointsArg = args.find((a) => a.startsWith('--endpoints='));
const ENDPOINTS = endpointsArg ? Number(endpointsArg.slice('--endpoints='.length)) : 8;
check([1, 2, 4, 8, 16, 32].includes(ENDPOINTS), '--endpoints=N takes 1, 2, 4, 8, 16 or 32');
const EVENTS = CLAIMED / ENDPOINTS;
const SIZES_KIB = [1, 256];
const builds = [['this build', 'dist']];
if (process.env.LINKHOOKS_BENCH_VARIANT_DIST)
  builds.push(['variant', process.env.LINKHOOKS_BENCH_VARIANT_DIST]);

/** A store of `dist`'s build on a database of its own, with the endpoints. */
async function openStore(dist, admin) {
  const { createSqliteStore, createPostgresStore } = await buildAt(dist);
  let store;
  if (admin) {
    const schema = pgSchemaName('bodies');
    onCleanup(() => admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
    store = createPostgresStore({ connectionString: PG_URL, schema });
  } else {
    store = createSqliteStore({ filename: join(tempDir('linkhooks-bench-bodies-'), 'store.db') });
  }
  onCleanup(() => store.close());
  await store.migrate();
  const ids = Array.from({ length: ENDPOINTS }, (_, i) => `ep_bodies_${i}`);
  await addEndpoints(store, 'acct_bodies', ids);
  return { store, events: 0 };
}

/** One round on `side`: the claim's time and this process's CPU in it, in ms. */
async function round(side, body) {
  const { store } = side;
  const createdAt = Date.now() - 60_000;
  for (let i = 0; i < EVENTS; i++) {
    const n = side.events++;
    await store.publish(
      {
        id: `evt_bodies_${String(n).padStart(8, '0')}`,
        accountId: 'acct_bodies',
        name: 'click',
        body,
        createdAt,
      },
      (() => {
        let d = 0;
        return () => `dlv_bodies_${String(n).padStart(8, '0')}_${d++}`;
      })(),
    );
  }
  const now = Date.now();
  const cpu = process.cpuUsage();
  const started = performance.now();
  const claimed = await store.claimDue({
    now,
    limit: CLAIMED,
    leaseMs: 60_000,
    perEndpointCap: 100,
  });
  const ms = performance.now() - started;
  const spent = process.cpuUsage(cpu);
  check(claimed.length === CLAIMED, `the claim took ${claimed.length} of ${CLAIMED}`);
  check(
    claimed.every((c) => Buffer.from(c.body).equals(body)),
    'a claimed delivery carried another body',
  );
  await recordDelivered(store, claimed, now);
  return { ms, cpuMs: (spent.user + spent.system) / 1000 };
}

try {
  let admin = null;
  if (postgres) {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    onCleanup(() => admin.end());
  }
  console.log(
    `${postgres ? 'PostgreSQL' : 'SQLite'} store, a claim of ${EVENTS === 1 ? 'one event’s' : `${EVENTS} events’`} ${CLAIMED} deliveries (${ENDPOINTS} endpoint${ENDPOINTS === 1 ? '' : 's'} each); median of ${ROUNDS - WARMUP} rounds`,
  );
  for (const kib of SIZES_KIB) {
    // An event's JSON, as every body is, around random text: PostgreSQL compresses a repetitive
    // body to almost nothing.
    const [head, tail] = ['{"type":"click","data":{"note":"', '"}}'];
    const text = randomBytes(kib * 1024)
      .toString('base64')
      .slice(0, kib * 1024 - head.length - tail.length);
    const body = Buffer.from(head + text + tail);
    const sides = [];
    for (const [label, dist] of builds) sides.push({ label, ...(await openStore(dist, admin)), samples: [] });
    for (let r = 0; r < ROUNDS; r++) {
      // Alternated, the first side rotating each round.
      for (let i = 0; i < sides.length; i++) {
        const side = sides[(r + i) % sides.length];
        const sample = await round(side, body);
        if (r >= WARMUP) side.samples.push(sample);
      }
    }
    for (const side of sides) {
      const ms = side.samples.map((s) => s.ms);
      const cpu = side.samples.map((s) => s.cpuMs);
      console.log(
        `  ${`${kib} KiB bodies, ${side.label}`.padEnd(30)} claim ${fmtMs(median(ms))} ms (${fmtRange(ms, fmtMs)}), CPU ${fmtMs(median(cpu))} ms (${fmtRange(cpu, fmtMs)})`,
      );
    }
    if (sides.length === 2) {
      const [base, variant] = sides;
      const of = (side, key) => side.samples.map((s) => s[key]);
      console.log(
        `  ${`${kib} KiB bodies, variant / this`.padEnd(30)} claim ${pairedRatio(of(variant, 'ms'), of(base, 'ms')).toFixed(2)}×, CPU ${pairedRatio(of(variant, 'cpuMs'), of(base, 'cpuMs')).toFixed(2)}×`,
      );
    }
  }
} finally {
  await cleanup();
}
