// Benchmark of @linkhooks/sender against baselines measured in the same run.
//
//   pnpm build && pnpm --filter @linkhooks/sender bench
//
// 1. Deliveries per second through the engine (SQLite, then PostgreSQL) to a loopback HTTPS
//    receiver in a child process, beside a bare undici loop sending the same signed body to the
//    same receiver at the same concurrency.
// 2. Publish → receipt latency at a steady 200 events/s.
// 3. claimDue with a million deliveries scheduled in the future, beside a thousand; and a claim
//    held up by one tenant's backlog, beside 50 or 20,000 endpoints with nothing queued; and a
//    claim with a per-endpoint cap of 1,000, beside one of 8; and one with 1,000 deliveries in flight,
//    beside none.
// 4. The peak RSS of this process.
// 5–7. The CLI-started service over HTTP, the log at a million rows, the noisy neighbour
//    (bench/README.md).
//
// The machines this runs on are noisy, so it never asserts absolute times: it prints medians and
// ratios against baselines of the same run. A figure below its goal is marked BELOW and the run
// still exits 0; only a broken harness (a receiver that does not answer, a failed delivery, a
// claim that does not return the due deliveries) exits 1. Every child process, temp file and
// PostgreSQL schema is removed at the end, on error and on Ctrl-C.
//
// It imports the BUILT package by name (package self-reference), so run `pnpm build` first.
import { createHmac } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import * as senderPackage from '@linkhooks/sender';
import pg from 'pg';
import { Agent } from 'undici';
import {
  CAPPED,
  CLAIM,
  CROWD,
  cappedSql,
  crowdSql,
  fillPostgres,
  fillPostgresHeldUp,
  fillPostgresWith,
  HELD,
  pgSchemaName,
  sqliteCappedStore,
  sqliteClaimStore,
  sqliteCrowdStore,
  sqliteHeldUpStore,
  timeCappedClaims,
  timeClaims,
  timeCrowdClaims,
  timeHeldUpClaims,
  timeTurnClaims,
} from './claims.mjs';
import { BODY_BYTES, click, envelopeBytes } from './click.mjs';
import {
  check,
  cleanup,
  createTestCertificates,
  fmtInt,
  fmtMs,
  fmtRange,
  forkTracked,
  HarnessError,
  lpad,
  median,
  monotonicMs,
  onCleanup,
  PG_URL,
  pad,
  pairedRatio,
  percentile,
  sleep,
  startReceiver,
  tempDir,
  withTimeout,
} from './harness.mjs';
import { noisyNeighbour } from './noisy-neighbour.mjs';
import { onRuntime } from './runtime.mjs';
import { runScale } from './scale.mjs';
import { runServicePart } from './service.mjs';
import { walRecordCounter } from './wal-records.mjs';

const { createSender, createSqliteStore } = senderPackage;
const createPostgresStore =
  typeof senderPackage.createPostgresStore === 'function' ? senderPackage.createPostgresStore : null;
// `node bench/run.mjs throughput latency` runs only those parts; no part named runs them all.
// `--runtime node24` runs the bench on that Node.js (bench/runtime.mjs).
const PART_NAMES = ['throughput', 'latency', 'claims', 'service', 'scale', 'noisy'];
const checkParts = (names) => {
  for (const part of names) {
    if (!PART_NAMES.includes(part)) {
      console.error(`unknown part "${part}": choose from ${PART_NAMES.join(', ')}`);
      process.exit(2);
    }
  }
};
const ARGS = await onRuntime(import.meta.url, checkParts);
const PARTS = new Set(ARGS.length ? ARGS : PART_NAMES);
/**
 * Set by a run of several parts for the process it runs part 5 in (servicePart): the file that
 * process writes part 5's results to, printing part 5 alone.
 */
const SERVICE_RESULTS = process.env.LINKHOOKS_BENCH_SERVICE_RESULTS;

const FLOW = {
  endpoints: 8, // 8 endpoints × perEndpointCap 8 = 64 in flight = the engine's default concurrency
  perEndpointCap: 8,
  concurrency: 64,
  events: 625, // × 8 endpoints = 5,000 deliveries per round
  warmupRounds: 1,
  rounds: 5,
};
FLOW.deliveries = FLOW.events * FLOW.endpoints;
const LATENCY = { rate: 200, warmupSeconds: 1, seconds: 10 };
const GOALS = {
  sqliteFlow: 0.5,
  postgresFlow: 0.4,
  p99Ms: 50,
  claimRatio: 2,
  singleIngest: 5_000,
  batchIngest: 20_000,
  // The event-loop delay beyond the monitor's sampling interval (loopDelayMs in harness.mjs).
  loopP99Ms: 20,
};
const ROUND_TIMEOUT_MS = 60_000;
const ACCOUNT_FLOW = 'acct_bench_flow';
const ACCOUNT_LATENCY = 'acct_bench_latency';

// ---- part 1: throughput --------------------------------------------------------------------------

/**
 * N POSTs of the engine's body and headers through one undici Agent, `concurrency` in flight. Its
 * connections share one TLS context, as the engine's do: with `connect: { ca }` alone undici
 * builds a context per connection, which made this loop about 12% slower and the ratios look
 * better than they are. `warm`: an Agent kept from round to round (its connections open), for a
 * comparison with a service that keeps its own; without it, a new Agent per round, as part 1's
 * engine makes a new client per round.
 */
async function bareRound(ctx, warm = null) {
  const { origins } = ctx.receiver;
  const body = envelopeBytes(click('clk', 0));
  const secret = 'whsec_bench_bare_loop_secret_0000000000000000000';
  const agent = warm ?? bareAgent(ctx);
  let next = 0;
  const lane = async () => {
    while (next < FLOW.deliveries) {
      const i = next++;
      const response = await agent.request({
        origin: origins[i % origins.length],
        path: '/hooks',
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-service-signature': createHmac('sha256', secret).update(body).digest('hex'),
          'x-service-event-id': 'evt_bench',
          'x-service-delivery-id': `dlv_bench_${i}`,
          'x-service-attempt': '1',
          'user-agent': 'linkhooks/bench',
        },
        body,
      });
      await response.body.text();
      check(response.statusCode === 200, `the receiver answered ${response.statusCode} to the bare loop`);
    }
  };
  const started = monotonicMs();
  await Promise.all(Array.from({ length: FLOW.concurrency }, lane));
  const seconds = (monotonicMs() - started) / 1000;
  if (!warm) await agent.close();
  return FLOW.deliveries / seconds;
}

const bareAgent = (ctx) =>
  new Agent({ connect: { secureContext: createSecureContext({ ca: ctx.certs.ca }) } });

/** An engine on `store` whose `done` resolves when `expected` deliveries were applied as delivered. */
function benchSender(ctx, store, expected, extra = {}) {
  let delivered = 0;
  let settle;
  const done = new Promise((resolve, reject) => {
    settle = { resolve, reject };
  });
  done.catch(() => undefined); // awaited by the caller; a failure before that is not unhandled
  const sender = createSender({
    store,
    ca: ctx.certs.ca,
    allowPrivateNetworks: true, // the receiver is on 127.0.0.1 (development switch)
    concurrency: FLOW.concurrency,
    perEndpointCap: FLOW.perEndpointCap,
    // One account is the whole load here, beside a bare loop at the same concurrency: its share is
    // the whole worker, and its event rate is not limited.
    perAccountCap: FLOW.concurrency,
    perOriginCap: FLOW.concurrency,
    perAccountAtOriginCap: FLOW.concurrency,
    quotas: { eventsPerSecond: 1_000_000, eventsBurst: 1_000_000 },
    onAttempt: (report) => {
      // Given back unsent: no attempt, the delivery due again as it was.
      if (report.unsent) return;
      if (report.attempt.failureKind) {
        settle.reject(
          new HarnessError(`an attempt failed: ${report.attempt.failureKind} ${report.attempt.errorMessage}`),
        );
      } else if (report.applied.applied && report.applied.status === 'delivered') {
        delivered++;
        extra.onDelivered?.(report);
        if (delivered === expected) settle.resolve(monotonicMs());
      }
    },
  });
  return { sender, done };
}

async function createEndpoints(ctx, store, accountId, origins) {
  const { sender } = benchSender(ctx, store, 0);
  for (const [i, origin] of origins.entries()) {
    await sender.createEndpoint(accountId, { url: `${origin}/hooks/${i}`, events: ['click'] });
  }
  await sender.stop();
}

/** Publishes FLOW.events events first (8 deliveries each), then starts the engine and times it. */
async function engineRound(ctx, flow, round) {
  const { sender, done } = benchSender(ctx, flow.store, FLOW.deliveries);
  const publishers = flow.kind === 'postgres' ? 8 : 1; // SQLite's publish is synchronous anyway
  let next = 0;
  const publishLane = async () => {
    while (next < FLOW.events) {
      const n = round * FLOW.events + next++;
      const { deliveries } = await sender.publish(ACCOUNT_FLOW, { event: 'click', data: click('clk', n) });
      check(deliveries.length === FLOW.endpoints, `a publish made ${deliveries.length} deliveries`);
    }
  };
  await Promise.all(Array.from({ length: publishers }, publishLane));
  const before = (await ctx.receiver.stats()).requests;
  const started = monotonicMs();
  sender.start();
  try {
    const finished = await withTimeout(done, ROUND_TIMEOUT_MS, `a ${flow.label} round`);
    const after = (await ctx.receiver.stats()).requests;
    check(
      after - before === FLOW.deliveries,
      `the receiver got ${after - before} requests, not ${FLOW.deliveries}`,
    );
    return FLOW.deliveries / ((finished - started) / 1000);
  } finally {
    await sender.stop(1_000);
  }
}

async function runThroughput(ctx) {
  const variants = [{ label: 'bare undici loop', run: () => bareRound(ctx) }];
  for (const flow of ctx.flows) {
    await createEndpoints(ctx, flow.store, ACCOUNT_FLOW, ctx.receiver.origins);
    variants.push({ label: `engine, ${flow.label}`, flow, run: (round) => engineRound(ctx, flow, round) });
  }
  const samples = variants.map(() => []);
  const total = FLOW.warmupRounds + FLOW.rounds;
  for (let round = 0; round < total; round++) {
    for (let k = 0; k < variants.length; k++) {
      const i = (round + k) % variants.length;
      const rate = await variants[i].run(round);
      if (round >= FLOW.warmupRounds) samples[i].push(rate);
    }
  }
  console.log(
    `\n1. Deliveries/s to a loopback HTTPS receiver (child process, ${FLOW.endpoints} ports), ${fmtInt(FLOW.deliveries)} deliveries of a ${BODY_BYTES}-byte signed click per round`,
  );
  console.log(
    `   ${FLOW.concurrency} in flight for both: the engine has concurrency ${FLOW.concurrency} and ${FLOW.endpoints} endpoints × perEndpointCap ${FLOW.perEndpointCap} (the defaults);`,
  );
  console.log(
    `   the bare loop spreads the same POSTs over the same ${FLOW.endpoints} origins. Engine: ${FLOW.events} events published first, then start() and`,
  );
  console.log(
    `   time until the onAttempt hook has counted every delivery delivered. Median of ${FLOW.rounds} interleaved rounds after ${FLOW.warmupRounds} warm-up.`,
  );
  console.log(`   ${pad('', 30)}${lpad('deliveries/s', 13)}   range`);
  const results = variants.map((v, i) => ({
    label: v.label,
    flow: v.flow,
    median: median(samples[i]),
    samples: samples[i],
  }));
  for (const r of results) {
    console.log(`   ${pad(r.label, 30)}${lpad(fmtInt(r.median), 13)}   ${fmtRange(r.samples)}`);
  }
  const [bare, ...engines] = results;
  const ratios = {};
  for (const e of engines) {
    const ratio = e.median / bare.median;
    ratios[e.flow.kind] = ratio;
    console.log(
      `   ${e.flow.label}: engine / bare ${ratio.toFixed(2)} (paired, median of per-round ratios: ${pairedRatio(e.samples, bare.samples).toFixed(2)})`,
    );
  }
  return ratios;
}

// ---- part 2: latency ---------------------------------------------------------------------------

/** Publishes at a steady rate, open loop (a slow publish does not slow the schedule down). */
async function runLatency(ctx, flow) {
  const warm = LATENCY.rate * LATENCY.warmupSeconds;
  const total = warm + LATENCY.rate * LATENCY.seconds;
  await createEndpoints(ctx, flow.store, ACCOUNT_LATENCY, ctx.receiver.origins.slice(0, 1));
  const { sender, done } = benchSender(ctx, flow.store, total);
  await ctx.receiver.stats(); // drain stale receipts
  sender.start();
  const publishedAt = new Float64Array(total);
  const publishes = [];
  const interval = 1000 / LATENCY.rate;
  const start = monotonicMs() + 10;
  let maxLag = 0;
  let i = 0;
  try {
    while (i < total) {
      const wait = start + i * interval - monotonicMs();
      if (wait > 0) await sleep(wait);
      while (i < total && start + i * interval <= monotonicMs()) {
        const now = monotonicMs();
        maxLag = Math.max(maxLag, now - (start + i * interval));
        publishedAt[i] = now;
        const p = sender.publish(ACCOUNT_LATENCY, { event: 'click', data: click('lat', i) });
        p.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
        publishes.push(p);
        i++;
      }
    }
    const publishSeconds = (monotonicMs() - start) / 1000;
    await Promise.all(publishes);
    await withTimeout(done, ROUND_TIMEOUT_MS, `the ${flow.label} latency run`);
    const { receipts } = await ctx.receiver.stats();
    const seen = new Map();
    for (const [seq, at] of receipts) if (!seen.has(seq)) seen.set(seq, at);
    check(seen.size === total, `the receiver reported ${seen.size} latency probes, not ${total}`);
    const latencies = [];
    for (const [seq, at] of seen) if (seq >= warm) latencies.push(at - publishedAt[seq]);
    return {
      label: flow.label,
      kind: flow.kind,
      count: latencies.length,
      rate: total / publishSeconds,
      maxLag,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: Math.max(...latencies),
    };
  } finally {
    await sender.stop(1_000);
  }
}

// ---- part 3: claims ----------------------------------------------------------------------------

async function runClaims(ctx) {
  const rows = [];
  const sets = [];
  const dir = tempDir('linkhooks-bench-claims-');
  sets.push({
    label: 'SQLite',
    kind: 'sqlite',
    make: (future) => sqliteClaimStore(createSqliteStore, dir, future),
    heldUp: (idle, now, retrying) => sqliteHeldUpStore(createSqliteStore, dir, idle, now, retrying),
    capped: (now) => sqliteCappedStore(createSqliteStore, dir, now),
    crowd: (now, inFlight) => sqliteCrowdStore(createSqliteStore, dir, now, inFlight),
  });
  /** A migrated PostgreSQL store in a fresh schema, filled by `fill(schema, store)`. */
  const pgClaimStore = async (what, fill) => {
    const schema = await ctx.postgres.schema(what);
    const store = createPostgresStore({ connectionString: PG_URL, schema, poolSize: 2 });
    onCleanup(() => store.close());
    await store.migrate();
    await fill(schema, store);
    return store;
  };
  if (ctx.postgres) {
    sets.push({
      label: 'PostgreSQL',
      kind: 'postgres',
      make: (future) => pgClaimStore(`claim${future}`, (schema) => fillPostgres(PG_URL, schema, future)),
      heldUp: (idle, now, retrying) =>
        pgClaimStore(`held${idle}${retrying ? 'r' : ''}`, (schema, store) =>
          fillPostgresHeldUp(PG_URL, store, schema, idle, now, retrying),
        ),
      capped: (now) =>
        pgClaimStore('capped', (schema, store) =>
          fillPostgresWith(PG_URL, store, schema, (series) => cappedSql(series, now)),
        ),
      crowd: (now, inFlight) =>
        pgClaimStore(`crowd${inFlight}`, (schema, store) =>
          fillPostgresWith(PG_URL, store, schema, (series) => crowdSql(series, now, inFlight, 'postgres')),
        ),
    });
  }
  for (const set of sets) {
    const filling = monotonicMs();
    const small = await set.make(CLAIM.small);
    const large = await set.make(CLAIM.large);
    const fillSeconds = (monotonicMs() - filling) / 1000;
    const [s, l] = await timeClaims([small, large]);
    await Promise.all([small.close(), large.close()]);
    const now = Date.now();
    const heldUp = async (retrying) => {
      const few = await set.heldUp(HELD.few, now, retrying);
      const many = await set.heldUp(HELD.many, now, retrying);
      const [f, m] = await timeHeldUpClaims([few, many], now);
      await Promise.all([few.close(), many.close()]);
      return { few: f, many: m, ratio: m.median / f.median };
    };
    const held = await heldUp(false);
    const retrying = await heldUp(true);
    const cappedStore = await set.capped(now);
    const [usualCap, largeCap] = await timeCappedClaims(cappedStore, now);
    await cappedStore.close();
    const calm = await set.crowd(now, 0);
    const crowded = await set.crowd(now, CROWD.inFlight);
    const [none, many] = await timeCrowdClaims([calm, crowded], now);
    const [inOrder, inTurn] = await timeTurnClaims(calm, now);
    await Promise.all([calm.close(), crowded.close()]);
    rows.push({
      ...set,
      small: s,
      large: l,
      ratio: l.median / s.median,
      fillSeconds,
      held,
      retrying,
      capped: { usual: usualCap, large: largeCap, ratio: largeCap.median / usualCap.median },
      crowd: { none, many, ratio: many.median / none.median },
      turn: { inOrder, inTurn, ratio: inTurn.median / inOrder.median },
    });
  }
  console.log(
    `\n3. claimDue({ limit: ${CLAIM.limit}, perEndpointCap: ${CLAIM.perEndpointCap} }) with ${CLAIM.due} deliveries due on ${fmtInt(CLAIM.endpoints)} endpoints, beside`,
  );
  console.log(
    `   ${fmtInt(CLAIM.small)} or ${fmtInt(CLAIM.large)} deliveries awaiting a retry 10 min – 10.5 h later. Median of ${CLAIM.calls} interleaved calls after ${CLAIM.warmup} warm-up;`,
  );
  console.log('   leases released after each call (not timed).');
  console.log(
    `   ${pad('', 12)}${lpad(`${fmtInt(CLAIM.small)} ms`, 12)}${lpad(`${fmtInt(CLAIM.large)} ms`, 14)}   ratio   fill`,
  );
  for (const r of rows) {
    console.log(
      `   ${pad(r.label, 12)}${lpad(fmtMs(r.small.median), 12)}${lpad(fmtMs(r.large.median), 14)}   ${lpad(`${r.ratio.toFixed(2)}×`, 7)}   ${r.fillSeconds.toFixed(0)} s   (ranges ${fmtMs(r.small.min)}–${fmtMs(r.small.max)}, ${fmtMs(r.large.min)}–${fmtMs(r.large.max)})`,
    );
  }
  console.log(
    `   Held up: one tenant's ${HELD.aEndpoints} endpoints at their cap with ${fmtInt(HELD.backlog)} of its deliveries due ahead of another's one, so the`,
  );
  console.log(
    `   claim reads past its walk (design D25); beside them ${fmtInt(HELD.few)} or ${fmtInt(HELD.many)} endpoints with nothing queued, then the same`,
  );
  console.log(
    `   with each of those endpoints holding a retry due ${HELD.retryInMs / 3_600_000} h later (queued, not due), as after an outage many receivers shared.`,
  );
  console.log(
    `   ${pad('', 22)}${lpad(`${fmtInt(HELD.few)} ms`, 12)}${lpad(`${fmtInt(HELD.many)} ms`, 14)}   ratio`,
  );
  for (const r of rows) {
    for (const [h, label] of [
      [r.held, r.label],
      [r.retrying, `${r.label}, retries`],
    ]) {
      console.log(
        `   ${pad(label, 22)}${lpad(fmtMs(h.few.median), 12)}${lpad(fmtMs(h.many.median), 14)}   ${lpad(`${h.ratio.toFixed(2)}×`, 7)}          (ranges ${fmtMs(h.few.min)}–${fmtMs(h.few.max)}, ${fmtMs(h.many.min)}–${fmtMs(h.many.max)})`,
      );
    }
  }
  console.log(
    `   A cap far above the batch: ${fmtInt(CAPPED.backlog)} deliveries due on ${CAPPED.endpoints} endpoints, the same claim with a per-endpoint`,
  );
  console.log(`   cap of ${CLAIM.perEndpointCap} and of ${fmtInt(CAPPED.large)}, interleaved.`);
  console.log(
    `   ${pad('', 22)}${lpad(`cap ${CLAIM.perEndpointCap} ms`, 12)}${lpad(`cap ${fmtInt(CAPPED.large)} ms`, 14)}   ratio`,
  );
  for (const r of rows) {
    const c = r.capped;
    console.log(
      `   ${pad(r.label, 22)}${lpad(fmtMs(c.usual.median), 12)}${lpad(fmtMs(c.large.median), 14)}   ${lpad(`${c.ratio.toFixed(2)}×`, 7)}          (ranges ${fmtMs(c.usual.min)}–${fmtMs(c.usual.max)}, ${fmtMs(c.large.min)}–${fmtMs(c.large.max)})`,
    );
  }
  console.log(
    `   More in flight than a walk: ${fmtInt(CROWD.endpoints)} endpoints with a delivery due each, and on ${fmtInt(CROWD.inFlight)} of them an earlier one`,
  );
  console.log(`   in flight (another worker's, the queue's first rows), beside none in flight.`);
  console.log(`   ${pad('', 22)}${lpad('none ms', 12)}${lpad(`${fmtInt(CROWD.inFlight)} ms`, 14)}   ratio`);
  for (const r of rows) {
    const c = r.crowd;
    console.log(
      `   ${pad(r.label, 22)}${lpad(fmtMs(c.none.median), 12)}${lpad(fmtMs(c.many.median), 14)}   ${lpad(`${c.ratio.toFixed(2)}×`, 7)}          (ranges ${fmtMs(c.none.min)}–${fmtMs(c.none.max)}, ${fmtMs(c.many.min)}–${fmtMs(c.many.max)})`,
    );
  }
  console.log(
    `   The accounts in turn (design D77): the same ${fmtInt(CROWD.endpoints)} endpoints, none in flight, a claim with the accounts in turn`,
  );
  console.log('   beside one in due order; a worker makes at most ten a second, fewer as they cost more.');
  console.log(`   ${pad('', 22)}${lpad('due order ms', 12)}${lpad('in turn ms', 14)}   ratio`);
  for (const r of rows) {
    const t = r.turn;
    console.log(
      `   ${pad(r.label, 22)}${lpad(fmtMs(t.inOrder.median), 12)}${lpad(fmtMs(t.inTurn.median), 14)}   ${lpad(`${t.ratio.toFixed(2)}×`, 7)}          (ranges ${fmtMs(t.inOrder.min)}–${fmtMs(t.inOrder.max)}, ${fmtMs(t.inTurn.min)}–${fmtMs(t.inTurn.max)})`,
    );
  }
  return rows;
}

// ---- PostgreSQL --------------------------------------------------------------------------------

/** Null (with the reason printed) when the store is not exported or the server does not answer. */
async function openPostgres() {
  if (!createPostgresStore) {
    console.log(
      'PostgreSQL store not available (createPostgresStore is not exported): PostgreSQL rows skipped.',
    );
    return null;
  }
  const admin = new pg.Client({ connectionString: PG_URL });
  try {
    await admin.connect();
  } catch (error) {
    console.log(`PostgreSQL not reachable at ${PG_URL} (${error.message}): PostgreSQL rows skipped.`);
    return null;
  }
  const walRecords = await walRecordCounter(admin);
  const schemas = [];
  onCleanup(async () => {
    for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  });
  return {
    /** A fresh schema name, dropped at cleanup (after the stores using it are closed). */
    async schema(what) {
      const name = pgSchemaName(what);
      schemas.push(name);
      return name;
    },
    /** The server's WAL insert position now (`lsn`), and as bytes written since its start. */
    async walSoFar() {
      const { rows } = await admin.query(
        "SELECT lsn, pg_wal_lsn_diff(lsn, '0/0') AS bytes FROM pg_current_wal_insert_lsn() AS lsn",
      );
      return { lsn: rows[0].lsn, bytes: Number(rows[0].bytes) };
    },
    /** The server's WAL records between two `lsn`s of walSoFar, or null (bench/wal-records.mjs). */
    walRecordsBetween: (from, to) => walRecords.recordsBetween(from, to),
  };
}

// ---- part 5: the service over HTTP ---------------------------------------------------------------

/** The job-queue peers, when their packages are installed (bench/peers). */
async function loadPeers(ctx) {
  let peers;
  try {
    peers = await import('./peers/index.mjs');
  } catch (error) {
    console.log(`   job-queue peers not available (${error.message}): their rows are skipped.`);
    return [];
  }
  const secret = 'whsec_bench_peer_secret_00000000000000000000000';
  const targets = ctx.receiver.origins.map((o, i) => ({ url: `${o}/hooks/${i}`, secret }));
  const events = Array.from({ length: FLOW.events }, (_, i) => envelopeBytes(click('peer', i)));
  const loaded = [];
  for (const name of peers.PEERS) {
    if (name !== 'bullmq' && !ctx.postgres) continue;
    const peer = await peers.createPeer(name, {
      targets,
      ca: ctx.certs.ca,
      concurrency: FLOW.concurrency,
      pgUrl: PG_URL,
      redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
    });
    onCleanup(() => peer.close());
    loaded.push({
      name,
      store: name === 'bullmq' ? 'Redis' : 'PostgreSQL',
      round: async (options) => {
        const { deliveries, ms } = await peer.runRound(events, options);
        return { rate: deliveries / (ms / 1000), deliveries };
      },
    });
  }
  return loaded;
}

/**
 * Part 5 in a process of its own when other parts run too, its results read back for the summary.
 * In this process, after parts 1 to 4, the bare loop and the peers (which run here) slowed down
 * while the services, processes of their own, did not: its bare loop took twice its CPU a delivery
 * and the ratios to it read about 1.6 times as high (bench/README.md, part 5).
 */
async function servicePart(ctx) {
  if (PARTS.size === 1) return serviceFigures(ctx);
  const file = join(tempDir('linkhooks-bench-part5-'), 'results.json');
  const child = forkTracked('./run.mjs', ['service'], {
    env: { ...process.env, LINKHOOKS_BENCH_SERVICE_RESULTS: file },
  });
  const code = await new Promise((resolve) => child.once('exit', resolve));
  check(code === 0, `part 5's process exited with ${code}`);
  return JSON.parse(readFileSync(file, 'utf8'));
}

/** Part 5 alone, its results written to SERVICE_RESULTS: what servicePart runs. */
async function serviceChild() {
  const certs = createTestCertificates();
  const ctx = { certs, receiver: await startReceiver(certs, FLOW.endpoints), postgres: await openPostgres() };
  writeFileSync(SERVICE_RESULTS, JSON.stringify(await serviceFigures(ctx)));
}

async function serviceFigures(ctx) {
  const sqliteFile = join(tempDir('linkhooks-bench-svc-'), 'service.db');
  const stores = [{ label: 'SQLite', db: `sqlite:${sqliteFile}`, file: sqliteFile }];
  if (ctx.postgres)
    stores.push({
      label: 'PostgreSQL',
      db: `${PG_URL}?schema=${await ctx.postgres.schema('svc')}`,
      server: 'PostgreSQL',
    });
  // Kept from round to round, as the service keeps its connections (bench/README.md, part 5).
  const warm = bareAgent(ctx);
  onCleanup(() => warm.close());
  return runServicePart(ctx, {
    bare: async () => ({ rate: await bareRound(ctx, warm), deliveries: FLOW.deliveries }),
    click: (prefix, n) => click(prefix.slice(0, 3), n),
    stores,
    peers: await loadPeers(ctx),
  });
}

// ---- main --------------------------------------------------------------------------------------

const NOISY_BACKLOGS = [1_000, 4_000];
/** One account's share of an origin a process, by default (design D25): 48 of the origin's 56. */
const SHARE_AT_ORIGIN = 48;
/** The label of each scenario after the backlogs', in part 7's table and the summary's rows. */
const crowdLabel = 'crowd in flight';
const twoLabel = 'two tenants hang';
const relayLabel = 'relay shared';
const viralLabel = 'viral tenant';
const relayTwoLabel = 'relay, two hang';
/** The crowd's slots across the processes (LINKHOOKS_CONCURRENCY): more than a claim reads. */
const CROWD_SLOTS = 1_500;
/** The last column of part 7's table: A's requests open at its receiver at their peak. */
const openPeak = (r) => String(r.aOpenPeak);

/**
 * Part 7's scenarios after the backlogs', in their order: each one's kind (its results'), label,
 * the summary's words for it, noisyNeighbour's options for a run with `workers` more processes,
 * and the table's last column.
 */
const NOISY_SCENARIOS = [
  {
    // The crowd in flight: 11 tenants of 99 endpoints each (the quota of 100 with A's failing one),
    // 1,089 requests held at once; B is measured once 1,024 are in flight, as many endpoints as a
    // claim of 32 reads in due order (claimWalk) before its steps for the deliveries in flight
    // (walkSteps): the walk now steps past them, and the store battery holds more than those steps
    // in flight. The crowd's endpoints all share the stalled receiver's origin, where hanging
    // tenants have origins of their own: its share is the whole process, or a process at it would
    // pass over every one of them and find B's for that alone.
    kind: 'crowd',
    label: crowdLabel,
    summary: `past a ${crowdLabel}`,
    options: (workers) => {
      const perProcess = String(Math.ceil(CROWD_SLOTS / (workers + 1)));
      return {
        aAccounts: 11,
        aEndpoints: 99,
        aEvents: 1,
        bEvents: 20,
        untilInFlight: 1_024,
        env: { LINKHOOKS_CONCURRENCY: perProcess, LINKHOOKS_PER_ORIGIN_CAP: perProcess },
      };
    },
    last: openPeak,
  },
  {
    // Two tenants whose 50 endpoints each hang, each tenant on a server of its own, at the default
    // slots: their shares (48 each, of their origin's 56, within their account's 56 of 64) are more
    // than every slot together. B is measured once both hold their shares, which they reach only
    // as the requests kept waiting give their slots back (worker/slots.ts).
    kind: 'two',
    label: twoLabel,
    summary: `while ${twoLabel}`,
    options: (workers) => ({
      aAccounts: 2,
      aOwnOrigins: true,
      aEvents: 500,
      bEvents: 60,
      untilInFlight: 2 * SHARE_AT_ORIGIN * (workers + 1),
    }),
    last: openPeak,
  },
  {
    // A relay both tenants share: A's 50 endpoints there never answer, 500 events queued, and B's
    // endpoint is on the same server, answering at once. A holds its share of the server and the
    // server's 16 connections; B is measured once A holds that share, its requests going out
    // through the second pool.
    kind: 'relay',
    label: relayLabel,
    summary: `at a ${relayLabel}`,
    options: (workers) => ({
      bAtStalled: true,
      aEvents: 500,
      bEvents: 60,
      untilInFlight: SHARE_AT_ORIGIN * (workers + 1),
    }),
    last: openPeak,
  },
  {
    // Two tenants' 50 endpoints each never answer on the server B's endpoint is on, 500 events
    // each: together they hold no more than one account's share of it (worker/origin-shares.ts),
    // and B's requests take the rest. B is measured once they hold 40 a process.
    kind: 'relay-two',
    label: relayTwoLabel,
    summary: 'at a relay where two tenants hang',
    options: (workers) => ({
      aAccounts: 2,
      bAtStalled: true,
      aEvents: 500,
      bEvents: 60,
      untilInFlight: 40 * (workers + 1),
    }),
    last: openPeak,
  },
  {
    // A tenant whose clicks come faster than they go out (a viral link): its 50 endpoints answer at
    // once, 1,000 events queued (50,000 deliveries, all due before B's), so no endpoint, account or
    // origin is at its limit and only the claim's order decides when B's click goes (design D77).
    kind: 'viral',
    label: viralLabel,
    summary: `behind a ${viralLabel}'s backlog`,
    options: () => ({ aAnswers: true, aEvents: 1_000, bEvents: 60 }),
    last: (r) => `${fmtInt(r.aArrivedAtB.at(-1))} of ${fmtInt(r.aDeliveries)} out`,
  },
];

/**
 * Part 7: the noisy neighbour (bench/noisy-neighbour.mjs) on the CLI-started service: B's
 * publish → receipt without A, then while A's 50 never-answering endpoints and a backlog of
 * NOISY_BACKLOGS events hold what the service lets them; SQLite, and PostgreSQL with serve plus
 * two worker processes. The larger backlog shows what A's backlog costs B: nothing, when every
 * claim walks at most its bound of the deliveries it may not take (claimWalk). Then
 * NOISY_SCENARIOS.
 */
async function runNoisy(ctx) {
  const stores = [{ label: 'SQLite', workers: 0 }];
  if (ctx.postgres) stores.push({ label: 'PostgreSQL ×3', workers: 2 });
  // A fresh database for each run: the one before ends with its backlog still queued.
  const database = async (label) => {
    if (label === 'SQLite') return `sqlite:${join(tempDir('linkhooks-bench-noisy-'), 'noisy.db')}`;
    const schema = await ctx.postgres.schema('noisy');
    return `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`;
  };
  console.log(
    '\n7. Noisy neighbour, CLI-started service: tenant B publishes one click at a time (publish → receipt, 60 each),',
  );
  console.log(
    `   without A, then while A's 50 endpoints never answer (one answers 500) with ${NOISY_BACKLOGS.map(fmtInt).join(' or ')} events queued`,
  );
  console.log(
    `   ${pad('', 28)}${lpad('without A p50/p99 ms', 22)}${lpad('with A p50/p99 ms', 20)}   A's requests open (peak)`,
  );
  const pair = (xs) => `${fmtMs(percentile(xs, 50))} / ${fmtMs(percentile(xs, 99))}`;
  const row = (name, r, last) =>
    console.log(`   ${pad(name, 28)}${lpad(pair(r.without), 22)}${lpad(pair(r.with), 20)}   ${last}`);
  const results = [];
  for (const { label, workers } of stores) {
    for (const aEvents of NOISY_BACKLOGS) {
      const db = await database(label);
      const r = await noisyNeighbour({ db, certs: ctx.certs, workers, aEvents, bEvents: 60 });
      row(`${label}, A ${fmtInt(aEvents)}`, r, r.aOpenPeak);
      results.push({ label, kind: 'backlog', aEvents, ...r });
    }
    for (const scenario of NOISY_SCENARIOS) {
      const options = scenario.options(workers);
      const r = await noisyNeighbour({ db: await database(label), certs: ctx.certs, workers, ...options });
      row(`${label}, ${scenario.label}`, r, scenario.last(r));
      results.push({ label, kind: scenario.kind, ...r });
    }
  }
  const [crowd, two, relay, relayTwo, viral] = NOISY_SCENARIOS.map((scenario) => scenario.options(0));
  console.log(
    `   (${crowdLabel}: ${crowd.aAccounts} tenants' ${crowd.aAccounts * crowd.aEndpoints} endpoints never answer, one click each, all in flight`,
  );
  console.log(
    `   at once in ${fmtInt(CROWD_SLOTS)} slots (LINKHOOKS_CONCURRENCY across the processes): more than a claim reads;
   B measured once ${fmtInt(crowd.untilInFlight)} of them are in flight;
   ${twoLabel}: two tenants' 50 endpoints each never answer, each tenant on a server of its own, ${fmtInt(two.aEvents)} events
   each, at the default slots; B measured once both hold their shares, ${SHARE_AT_ORIGIN} requests a process each;
   ${relayLabel}: A's 50 endpoints never answer on the server B's endpoint is on, ${fmtInt(relay.aEvents)} events, at the default
   slots; B measured once A holds its share of that server, ${SHARE_AT_ORIGIN} requests a process;
   ${relayTwoLabel}: two tenants' 50 endpoints each never answer on that server, ${fmtInt(relayTwo.aEvents)} events each; B measured
   once they hold ${relayTwo.untilInFlight} requests a process (together one account's share of it, divided);
   ${viralLabel}: A's 50 endpoints answer at once, ${fmtInt(viral.aEvents)} events queued; the last column, A's deliveries
   out when B's last click arrived)`,
  );
  return results;
}

async function main() {
  if (SERVICE_RESULTS) return serviceChild();
  const began = monotonicMs();
  console.log(
    `@linkhooks/sender bench — Node ${process.version}. Ratios matter; absolute figures depend on the machine.`,
  );
  const certs = createTestCertificates();
  const receiver = await startReceiver(certs, FLOW.endpoints);
  const ctx = { certs, receiver, flows: [], postgres: await openPostgres() };

  const dir = tempDir('linkhooks-bench-');
  const sqlite = createSqliteStore({ filename: join(dir, 'flow.db') });
  onCleanup(() => sqlite.close());
  await sqlite.migrate();
  ctx.flows.push({ label: 'SQLite', kind: 'sqlite', store: sqlite });
  if (ctx.postgres) {
    const store = createPostgresStore({
      connectionString: PG_URL,
      schema: await ctx.postgres.schema('flow'),
    });
    onCleanup(() => store.close());
    await store.migrate();
    ctx.flows.push({ label: 'PostgreSQL', kind: 'postgres', store });
  }

  const flowRatios = PARTS.has('throughput') ? await runThroughput(ctx) : {};

  const latencies = [];
  if (PARTS.has('latency')) for (const flow of ctx.flows) latencies.push(await runLatency(ctx, flow));
  // Its heading only when the part ran: a run of other parts printed it with nothing under it.
  if (latencies.length > 0) {
    console.log(
      `\n2. Publish → receipt latency, ${LATENCY.rate} events/s for ${LATENCY.seconds} s after ${LATENCY.warmupSeconds} s warm-up, one endpoint; times from the`,
    );
    console.log(
      '   monotonic clock the benchmark and the receiver process share (publish call → body received).',
    );
    console.log(
      `   ${pad('', 12)}${lpad('p50 ms', 8)}${lpad('p99 ms', 8)}${lpad('max ms', 8)}   events   rate/s   pacing lag max`,
    );
  }
  for (const l of latencies) {
    console.log(
      `   ${pad(l.label, 12)}${lpad(fmtMs(l.p50), 8)}${lpad(fmtMs(l.p99), 8)}${lpad(fmtMs(l.max), 8)}   ${lpad(l.count, 6)}   ${lpad(l.rate.toFixed(0), 6)}   ${fmtMs(l.maxLag)} ms`,
    );
  }

  const claims = PARTS.has('claims') ? await runClaims(ctx) : [];

  const service = PARTS.has('service') ? await servicePart(ctx) : {};
  const scale = PARTS.has('scale')
    ? await runScale({
        createSender,
        createSqliteStore,
        createPostgresStore,
        postgres: ctx.postgres,
        pgUrl: PG_URL,
      })
    : {};

  const noisy = PARTS.has('noisy') ? await runNoisy(ctx) : [];

  const maxRssMiB = process.resourceUsage().maxRSS / 1024;
  console.log(
    `\n4. Peak RSS of this process: ${maxRssMiB.toFixed(0)} MiB (engine, stores, bare loop; the receiver and the SQLite bulk fill run in child processes)`,
  );

  const summary = [];
  const flowRow = (kind, label, goal) => {
    if (flowRatios[kind] === undefined)
      summary.push([`deliveries/s engine/bare, ${label}`, 'n/a', `≥ ${goal}`, null]);
    else
      summary.push([
        `deliveries/s engine/bare, ${label}`,
        flowRatios[kind].toFixed(2),
        `≥ ${goal}`,
        flowRatios[kind] >= goal,
      ]);
  };
  flowRow('sqlite', 'SQLite', GOALS.sqliteFlow);
  flowRow('postgres', 'PostgreSQL', GOALS.postgresFlow);
  for (const label of ['SQLite', 'PostgreSQL']) {
    const l = latencies.find((x) => x.label === label);
    summary.push([
      `latency p99 (p50), ${label}`,
      l ? `${fmtMs(l.p99)} (${fmtMs(l.p50)}) ms` : 'n/a',
      `≤ ${GOALS.p99Ms} ms`,
      l ? l.p99 <= GOALS.p99Ms : null,
    ]);
  }
  for (const label of ['SQLite', 'PostgreSQL']) {
    const c = claims.find((x) => x.label === label);
    summary.push([
      `claim 1M / 1k, ${label}`,
      c ? `${c.ratio.toFixed(2)}×` : 'n/a',
      `≤ ${GOALS.claimRatio}×`,
      c ? c.ratio <= GOALS.claimRatio : null,
    ]);
    summary.push([
      `held-up claim, 20k / 50 endpoints, ${label}`,
      c ? `${c.held.ratio.toFixed(2)}×` : 'n/a',
      `≤ ${GOALS.claimRatio}×`,
      c ? c.held.ratio <= GOALS.claimRatio : null,
    ]);
    summary.push([
      `  the same, each endpoint with a retry queued, ${label}`,
      c ? `${c.retrying.ratio.toFixed(2)}×` : 'n/a',
      `≤ ${GOALS.claimRatio}×`,
      c ? c.retrying.ratio <= GOALS.claimRatio : null,
    ]);
    summary.push([
      `claim, ${fmtInt(CROWD.inFlight)} in flight / none, ${label}`,
      c ? `${c.crowd.ratio.toFixed(2)}×` : 'n/a',
      `≤ ${GOALS.claimRatio}×`,
      c ? c.crowd.ratio <= GOALS.claimRatio : null,
    ]);
    summary.push([
      `claim in turn / in due order, ${fmtInt(CROWD.endpoints)} endpoints due, ${label}`,
      c ? `${c.turn.ratio.toFixed(2)}×` : 'n/a',
      '—',
      'info',
    ]);
    summary.push([
      `claim, cap ${fmtInt(CAPPED.large)} / ${CLAIM.perEndpointCap}, ${label}`,
      c ? `${c.capped.ratio.toFixed(2)}×` : 'n/a',
      `≤ ${GOALS.claimRatio}×`,
      c ? c.capped.ratio <= GOALS.claimRatio : null,
    ]);
  }
  for (const [label, goal] of [
    ['SQLite', GOALS.sqliteFlow],
    ['PostgreSQL', GOALS.postgresFlow],
  ]) {
    const f = service[label];
    summary.push([
      `service ingest+delivery/bare, ${label}`,
      f ? f.ratio.toFixed(2) : 'n/a',
      `≥ ${goal}`,
      f ? f.ratio >= goal : null,
    ]);
    summary.push([
      `service event-loop p99, ${label}`,
      f ? `${f.loopP99.toFixed(1)} ms` : 'n/a',
      `≤ ${GOALS.loopP99Ms} ms`,
      f ? f.loopP99 <= GOALS.loopP99Ms : null,
    ]);
    for (const peer of Object.keys(service).filter((k) => k.startsWith('peer '))) {
      const p = service[peer];
      const same = label === 'PostgreSQL' || p.store === 'Redis';
      if (!f || !same) continue;
      // Like for like: a click a request beside a click a call, then batches beside batches.
      const name = peer.slice(5);
      const ratio = f.delivery / p.rate;
      summary.push([`service ${label} / ${name}`, `${ratio.toFixed(2)}×`, '> 1×', ratio > 1]);
      const batched = f.batchedDelivery / p.batchedRate;
      summary.push([`  batched, / ${name} batched`, `${batched.toFixed(2)}×`, '> 1×', batched > 1]);
      const unlike = f.delivery / p.batchedRate;
      summary.push([`  single, / ${name} batched`, `${unlike.toFixed(2)}×`, '—', 'info']);
    }
  }
  const s = service.SQLite;
  summary.push([
    'service single ingest, SQLite',
    s ? `${fmtInt(s.single)}/s` : 'n/a',
    `≥ ${fmtInt(GOALS.singleIngest)}`,
    s ? s.single >= GOALS.singleIngest : null,
  ]);
  summary.push([
    'service batch ingest, SQLite',
    s ? `${fmtInt(s.batch)}/s` : 'n/a',
    `≥ ${fmtInt(GOALS.batchIngest)}`,
    s ? s.batch >= GOALS.batchIngest : null,
  ]);
  const floor = service.floor;
  summary.push([
    'ingest floor (HTTP + JSON alone)',
    floor ? `${fmtInt(floor.single)}/s, ${fmtInt(floor.batch)}/s` : 'n/a',
    '—',
    'info',
  ]);
  summary.push([
    'service single ingest / floor, SQLite',
    s ? s.singleOfFloor.toFixed(2) : 'n/a',
    '—',
    'info',
  ]);
  for (const label of ['SQLite', 'PostgreSQL']) {
    const r = scale[label];
    const worst = r
      ? Math.max(r.scrape, r.first, r.deep, r.failed, r.event, r.prunePerK, r.deletePerK)
      : null;
    summary.push([
      `scale 1M / 10k (worst of 7), ${label}`,
      r ? `${worst.toFixed(2)}×` : 'n/a',
      '≤ 2×',
      r ? worst <= 2 : null,
    ]);
    summary.push([
      `event-loop p99 counting the queue, ${label}`,
      r ? `${r.countLoopP99.toFixed(1)} ms` : 'n/a',
      `≤ ${GOALS.loopP99Ms} ms`,
      r ? r.countLoopP99 <= GOALS.loopP99Ms : null,
    ]);
    summary.push([
      `event-loop p99 in a prune, ${label}`,
      r ? `${r.loopP99.toFixed(1)} ms` : 'n/a',
      `≤ ${GOALS.loopP99Ms} ms`,
      r ? r.loopP99 <= GOALS.loopP99Ms : null,
    ]);
    summary.push([
      `event-loop p99 deleting an endpoint, ${label}`,
      r ? `${r.deleteLoopP99.toFixed(1)} ms` : 'n/a',
      `≤ ${GOALS.loopP99Ms} ms`,
      r ? r.deleteLoopP99 <= GOALS.loopP99Ms : null,
    ]);
    summary.push([
      `event-loop p99 pausing and resuming an endpoint, ${label}`,
      r ? `${r.pauseLoopP99.toFixed(1)} ms` : 'n/a',
      `≤ ${GOALS.loopP99Ms} ms`,
      r ? r.pauseLoopP99 <= GOALS.loopP99Ms : null,
    ]);
    summary.push([
      `pause, resume per row 1M / 10k, ${label}`,
      r ? `${r.pausePerK.toFixed(2)}×, ${r.resumePerK.toFixed(2)}×` : 'n/a',
      '—',
      'info',
    ]);
  }
  for (const label of ['SQLite', 'PostgreSQL ×3']) {
    const runs = noisy.filter((x) => x.label === label);
    const backlogs = runs.filter((r) => r.kind === 'backlog');
    const worst = backlogs.length ? Math.max(...backlogs.map((r) => percentile(r.with, 99))) : null;
    summary.push([
      `noisy neighbour: B p99 with A (worst backlog), ${label}`,
      worst === null ? 'n/a' : `${fmtMs(worst)} ms`,
      '≤ 1,000 ms',
      worst === null ? null : worst <= 1000,
    ]);
    for (const { kind, summary: what } of NOISY_SCENARIOS) {
      const found = runs.find((r) => r.kind === kind);
      const p99 = found ? percentile(found.with, 99) : null;
      summary.push([
        `noisy neighbour: B p99 ${what}, ${label}`,
        p99 === null ? 'n/a' : `${fmtMs(p99)} ms`,
        '≤ 1,000 ms',
        p99 === null ? null : p99 <= 1000,
      ]);
    }
    const p99With = (aEvents) => percentile(backlogs.find((r) => r.aEvents === aEvents).with, 99);
    const [small, large] = NOISY_BACKLOGS;
    summary.push([
      `B p99 with A: ${fmtInt(large)} / ${fmtInt(small)} events, ${label}`,
      runs.length ? `${(p99With(large) / p99With(small)).toFixed(2)}×` : 'n/a',
      '—',
      'info',
    ]);
  }
  summary.push(['peak RSS', `${maxRssMiB.toFixed(0)} MiB`, '—', 'info']);

  console.log('\nSummary');
  console.log(`   ${pad('figure', 36)}${lpad('value', 22)}${lpad('goal', 12)}   result`);
  for (const [name, value, goal, pass] of summary) {
    const verdict = pass === 'info' ? 'info' : pass === null ? 'skipped' : pass ? 'PASS' : 'BELOW';
    console.log(`   ${pad(name, 36)}${lpad(value, 22)}${lpad(goal, 12)}   ${verdict}`);
  }
  console.log(
    `   (${((monotonicMs() - began) / 1000).toFixed(0)} s; figures below goal are reported, not failed)`,
  );
}

main()
  .then(() => cleanup())
  .catch(async (error) => {
    await cleanup();
    console.error(error instanceof HarnessError ? `\nharness broken: ${error.message}` : error);
    process.exit(1);
  });
