// Two builds of the CLI-started service, round by round: two `linkhooks-sender serve` of each, each
// on a fresh database of its own, ingest + delivery rounds (bench/service.mjs, as part 5 runs them)
// alternated between A and B after the warm-up rounds. A change that moves the service by a few
// percent hides in the spread of whole runs compared one after the other (the machine's speed
// drifts from one minute to the next); paired round by round, each ratio is of two rounds a few
// seconds apart. Prints, for A and B, the deliveries per second, the service's CPU per
// delivery (all its threads) and its event loop's, the database server's on PostgreSQL, and the
// event loop's delay p99 and the shares of the round it ran and waited for a core: medians with
// their ranges, and B over A as the median of per-round ratios (for the shares, of per-round
// differences). With --ingest, part 5's ingest rounds instead (no endpoint subscribed): the events
// per second, the service's CPU per event and its event loop's, and the loop's figures.
//
//   node bench/service-ab.mjs <A's dist/> <B's dist/> [--postgres] [--batched | --ingest single|batch]
//                             [--rounds N] [--body-kib N] [--idle-s N] [--log N] [--runtime node22|node24]
//
// --body-kib: each click's body N KiB long (1 to 240) instead of part 5's 1 KiB, one click a request.
// --idle-s: every service left with nothing to do for N seconds (1 to 120) before each counted round,
// as part 5's services wait while the bench runs the others' rounds: what the first burst after a
// quiet spell costs (README.md, "Reading a slow figure").
// --log: each SQLite service starts on a file already holding N delivered deliveries of another
// account (up to 2,000,000; fill-log.mjs, as the scale part fills its log), as a service that has
// run for a while: what its page cache holds and misses then, not on an empty file. The file is
// migrated by A's build: B's services migrate their copies further if B adds migrations.
//
// A build's dist/ is a folder with its cli.js, as `pnpm build` leaves it (copy one aside, as
// dist-old/, before building the other); a relative path is read from this package's folder.
// LINKHOOKS_BENCH_NODE_ARGS gives both sides Node options, LINKHOOKS_BENCH_NODE_ARGS_B gives B more
// of its own (the same dist/ on both sides weighs those options). LINKHOOKS_BENCH_SERVICE_ENV and
// LINKHOOKS_BENCH_SERVICE_ENV_B do the same for the services' environment, as a JSON object of
// strings, B's set over the common ones (README.md, "Reading a slow figure", weighs twice the slots
// with four of them; the bench's endpoints and caps hold 64 in flight whatever one of them says).
// An even number of rounds gives each pair of services half of them.
import { copyFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { NODE_RUNTIMES } from '@linkhooks/runtimes';
import { pgSchemaName } from './claims.mjs';
import { clicksOf } from './click.mjs';
import { startCpuMeter } from './cpu-meter.mjs';
import {
  check,
  cleanup,
  createTestCertificates,
  fmtInt,
  median,
  onCleanup,
  PACKAGE,
  PG_URL,
  pairedRatio,
  sleep,
  startReceiver,
  tempDir,
} from './harness.mjs';
import { onRuntime } from './runtime.mjs';
import { fillSqliteLog } from './scale.mjs';
import {
  batchIngestRound,
  deliveryRound,
  envOf,
  nodeArgsOf,
  SERVICE,
  singleIngestRound,
  startService,
} from './service.mjs';

const INGEST_ROUNDS = { single: singleIngestRound, batch: batchIngestRound };
const USAGE = `usage: node bench/service-ab.mjs <A's dist/> <B's dist/> [--postgres] [--batched | --ingest single|batch] [--rounds N] [--body-kib N] [--idle-s N] [--log N] [--runtime ${NODE_RUNTIMES.join('|')}]`;

/** The options `args` give, or the usage and exit 2 where they are not a comparison's. */
function optionsOf(args) {
  try {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        postgres: { type: 'boolean', default: false },
        batched: { type: 'boolean', default: false },
        ingest: { type: 'string' },
        rounds: { type: 'string', default: '12' },
        'body-kib': { type: 'string', default: '1' },
        'idle-s': { type: 'string', default: '0' },
        log: { type: 'string', default: '0' },
      },
    });
    const rounds = Number(values.rounds);
    // An ingest request takes 256 KiB; the click's other fields and the request's share some of it.
    const bodyKib = Number(values['body-kib']);
    const idleS = Number(values['idle-s']);
    const log = Number(values.log);
    const ingest =
      values.ingest === undefined || (Object.hasOwn(INGEST_ROUNDS, values.ingest) && !values.batched);
    if (
      positionals.length === 2 &&
      Number.isInteger(rounds) &&
      rounds > 0 &&
      ingest &&
      Number.isInteger(bodyKib) &&
      bodyKib >= 1 &&
      bodyKib <= 240 &&
      Number.isInteger(idleS) &&
      idleS >= 0 &&
      idleS <= 120 &&
      Number.isInteger(log) &&
      log >= 0 &&
      log <= 2_000_000 &&
      (log === 0 || !values.postgres) &&
      // A batch request's clicks share its 8 MiB.
      (bodyKib === 1 || (!values.batched && values.ingest !== 'batch'))
    )
      return { values, positionals, rounds, bodyKib, idleS, log };
  } catch {
    // an option it does not know, or one without its value: the usage says
  }
  console.error(USAGE);
  process.exit(2);
}

const { values, positionals, rounds, bodyKib, idleS, log } = optionsOf(
  await onRuntime(import.meta.url, optionsOf),
);
const cliOf = (dist) => join(resolve(PACKAGE, dist), 'cli.js');

const commonEnv = envOf('LINKHOOKS_BENCH_SERVICE_ENV');
const envB = { ...commonEnv, ...envOf('LINKHOOKS_BENCH_SERVICE_ENV_B') };

try {
  const certs = createTestCertificates();
  const receiver = await startReceiver(certs, 8);
  const ctx = { certs, receiver, flows: [] };
  let admin = null;
  if (values.postgres) {
    const pg = (await import('pg')).default;
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    onCleanup(() => admin.end());
  }
  // --log: one file holding the log, filled once (fill-log.mjs), copied for each service.
  let logFile = null;
  if (log > 0) {
    logFile = join(tempDir('linkhooks-bench-ab-log-'), 'log.db');
    const { createSqliteStore } = await import(join(resolve(PACKAGE, positionals[0]), 'index.js'));
    await fillSqliteLog(createSqliteStore, logFile, log, Date.now());
  }
  const database = async (side) => {
    if (!admin) {
      const file = join(tempDir(`linkhooks-bench-ab-${side}-`), 'service.db');
      if (logFile) copyFileSync(logFile, file);
      return `sqlite:${file}`;
    }
    const schema = pgSchemaName(`ab_${side}`);
    // Registered first, run last (after the service stops): harness.mjs runs cleanups in reverse.
    onCleanup(() => admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
    return `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`;
  };
  const common = nodeArgsOf(process.env.LINKHOOKS_BENCH_NODE_ARGS);
  // Two services of each build, started A, B, B, A, and paired A with the B started next to it:
  // on PostgreSQL the service started second ran 6-7% faster in two comparisons of one build with
  // itself (a pair each), so neither build may always be the one started first.
  const options = {
    A: { cli: cliOf(positionals[0]), nodeArgs: common, env: commonEnv },
    B: {
      cli: cliOf(positionals[1]),
      nodeArgs: [...common, ...nodeArgsOf(process.env.LINKHOOKS_BENCH_NODE_ARGS_B)],
      env: envB,
    },
  };
  const services = [];
  for (const [build, n] of [
    ['A', 1],
    ['B', 1],
    ['B', 2],
    ['A', 2],
  ]) {
    const db = await database(`${build.toLowerCase()}${n}`);
    services.push({ build, service: await startService(ctx, db, options[build]) });
  }
  // Each service has its copy: the filled file (1.7 GB at a million deliveries) goes.
  if (logFile) rmSync(logFile);
  const pairs = [services.slice(0, 2), services.slice(2, 4)];
  const samples = { A: [], B: [] };
  const click = clicksOf(bodyKib * 1024);
  const clickOf = (prefix, n) => click(prefix.slice(0, 3), n);
  const round = async ({ service }) => {
    if (values.ingest) return INGEST_ROUNDS[values.ingest](service, clickOf);
    const stop = await startCpuMeter(receiver, admin ? 'PostgreSQL' : null);
    const result = await deliveryRound(ctx, service, clickOf, { batched: values.batched });
    const { serverUs } = await stop();
    if (admin) check(Number.isFinite(serverUs), 'no PostgreSQL process on this machine to measure (/proc)');
    return { ...result, serverUs: serverUs / result.deliveries };
  };
  for (let r = 0; r < SERVICE.warmupRounds; r++) for (const side of services) await round(side);
  // A round of a pair runs its two services one after the other, in the order they started.
  for (let r = 0; r < rounds; r++) {
    for (const side of pairs[r % 2]) {
      if (idleS > 0) await sleep(idleS * 1000);
      samples[side.build].push(await round(side));
    }
  }
  const what = values.ingest
    ? `${values.ingest === 'single' ? fmtInt(SERVICE.singleEvents) : fmtInt(SERVICE.batchEvents)} events a round, ${values.ingest === 'single' ? 'one a request' : `${SERVICE.batchSize} a request`}, no endpoint`
    : `${fmtInt(SERVICE.deliveryEvents * 8)} deliveries a round${values.batched ? ' (batched ingest)' : ''}`;
  const bodies = bodyKib === 1 ? '' : `, bodies of ${bodyKib} KiB`;
  const idle = idleS === 0 ? '' : `, each after ${idleS} s idle`;
  const filled = log === 0 ? '' : `, on a log of ${fmtInt(log)} deliveries`;
  console.log(
    `${admin ? 'PostgreSQL' : 'SQLite'} service, ${what}${bodies}${idle}${filled}; A ${positionals[0]}, B ${positionals[1]}; median of ${rounds} rounds each, paired`,
  );
  const ms = (x) => x.toFixed(1);
  const rows = values.ingest
    ? [
        ['events per second', '/s', (s) => s.rate, fmtInt],
        ['service CPU per event', 'µs', (s) => s.cpuUs, fmtInt],
        ['  of it, its event loop', 'µs', (s) => s.mainUs, fmtInt],
      ]
    : [
        ['deliveries per second', '/s', (s) => s.rate, fmtInt],
        ['service CPU per delivery', 'µs', (s) => s.cpuUs, fmtInt],
        ['  of it, its event loop', 'µs', (s) => s.mainUs, fmtInt],
        ...(admin ? [['database CPU per delivery', 'µs', (s) => s.serverUs, fmtInt]] : []),
      ];
  // The service's event-loop delay p99 during the round, beyond its sampling interval (service.mjs).
  rows.push(['event-loop delay p99', 'ms', (s) => s.loopP99, ms]);
  // Of the round, the shares its event loop's thread ran and waited for a core (part of any delay
  // above; together near 100%, the loop bounds the round): compared as B's points over A's, a ratio
  // of shares that may be 0 saying little.
  const points = (b, a) => `B-A ${median(b.map((x, i) => x - a[i])).toFixed(0)} points`;
  rows.push(['loop running', '%', (s) => 100 * s.loopRunShare, (x) => x.toFixed(0), points]);
  rows.push(['loop waiting for a core', '%', (s) => 100 * s.loopWaitShare, (x) => x.toFixed(0), points]);
  const ratio = (b, a) => `B/A ${pairedRatio(b, a).toFixed(3)}`;
  for (const [name, unit, of, fmt, compare = ratio] of rows) {
    const a = samples.A.map(of);
    const b = samples.B.map(of);
    // Its event loop's CPU, running share and wait for a core are read from /proc/<pid>/task, where they can be.
    if (![...a, ...b].every(Number.isFinite)) continue;
    const range = (xs) => `${fmt(Math.min(...xs))} – ${fmt(Math.max(...xs))}`;
    console.log(
      `  ${name.padEnd(26)} A ${fmt(median(a))} ${unit} (${range(a)}), B ${fmt(median(b))} ${unit} (${range(b)}): ${compare(b, a)}`,
    );
  }
} finally {
  await cleanup();
}
