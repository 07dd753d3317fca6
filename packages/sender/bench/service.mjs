// The platform's path: `linkhooks-sender serve` started by its CLI and driven over HTTP, as the
// platform drives it. Ingest of single events and of batches, and ingest + delivery to the bench
// receiver beside the bare undici loop; the service's own event-loop delay p99 (its /metrics) during
// each burst, and its CPU per delivery. Used by bench/run.mjs (part `service`) and by
// bench/service-ab.mjs.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EVENT_LOOP_SAMPLE_MS } from '@linkhooks/sender';
import { Pool } from 'undici';
import { mainThreadTimes, startCpuMeter } from './cpu-meter.mjs';
import {
  check,
  fmtInt,
  fmtRange,
  forkTracked,
  HarnessError,
  loopDelayMs,
  median,
  monotonicMs,
  onCleanup,
  pairedRatio,
  sleep,
  tempDir,
  withTimeout,
} from './harness.mjs';
import { runtimeEnv } from './runtime.mjs';

const MASTER_KEY = randomBytes(32).toString('base64');

// LINKHOOKS_BENCH_CLI: another build of the CLI, run in its place (bench/service-ab.mjs compares
// two builds round by round).
const CLI = process.env.LINKHOOKS_BENCH_CLI ?? fileURLToPath(new URL('../dist/cli.js', import.meta.url));
// LINKHOOKS_BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=…' profiles the service.
/** Node options from a variable's text, separated by white space. */
export const nodeArgsOf = (text) => text?.split(/\s+/).filter(Boolean) ?? [];
const NODE_ARGS = nodeArgsOf(process.env.LINKHOOKS_BENCH_NODE_ARGS);
const TOKEN = 'svc_bench_token_0123456789abcdef';

/**
 * The variables of the services' environment that `name` gives, a JSON object of strings, such as
 * '{"LINKHOOKS_CONCURRENCY":"128"}' (none when unset or empty); anything else exits 2 saying so.
 */
export function envOf(name) {
  const text = process.env[name];
  if (!text) return {};
  try {
    const env = JSON.parse(text);
    if (
      env &&
      typeof env === 'object' &&
      !Array.isArray(env) &&
      Object.values(env).every((v) => typeof v === 'string')
    )
      return env;
  } catch {
    // not JSON: the message says what it takes
  }
  console.error(`${name} takes a JSON object of strings, such as '{"LINKHOOKS_CONCURRENCY":"128"}'`);
  process.exit(2);
}

export const SERVICE = {
  clients: 32, // concurrent ingest clients
  singleEvents: 6_000,
  batchEvents: 40_000,
  batchSize: 500,
  batchClients: 4,
  deliveryEvents: 625, // × 8 endpoints = 5,000 deliveries
  // The same clicks through the batch route in the batched delivery round, one request after
  // another: × 8 endpoints = 1,000 deliveries a request, as a peer's batched round enqueues 1,000
  // jobs a call.
  deliveryBatch: 125,
  rounds: 3,
  // Rounds of each kind run first and not counted: V8 goes on optimizing a service's hot paths for
  // tens of thousands of deliveries (bench/README.md, part 5).
  warmupRounds: 4,
};

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

/** Runs the CLI at `cli` to completion; resolves with its stdout. */
function runCli(cli, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => {
      out += c;
    });
    child.stderr.on('data', (c) => {
      err += c;
    });
    child.once('exit', (code) =>
      code === 0 ? resolve(out) : reject(new HarnessError(`linkhooks-sender ${args[0]}: ${err || out}`)),
    );
  });
}

/**
 * Starts `linkhooks-sender serve` on `db`, with two business accounts: one with an endpoint on
 * each receiver origin (click events), one with none (ingest alone); `keys` holds their API keys. `cli`: the build's cli.js;
 * `nodeArgs`: options for the service's Node; `env`: variables of the service's environment set
 * over the bench's own (part 5's LINKHOOKS_BENCH_SERVICE_ENV; service-ab.mjs weighs settings with
 * it, as twice the slots in README.md).
 */
export async function startService(ctx, db, { cli = CLI, nodeArgs = NODE_ARGS, env: settings = {} } = {}) {
  const dir = tempDir('linkhooks-bench-service-');
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, ctx.certs.ca);
  const env = {
    PATH: process.env.PATH,
    ...runtimeEnv(), // a run on another Node.js (bench/runtime.mjs)
    LINKHOOKS_SERVICE_TOKEN: TOKEN,
    // PostgreSQL needs a master key; a SQLite service makes its own beside the database.
    LINKHOOKS_MASTER_KEY: MASTER_KEY,
    LINKHOOKS_LOG_LEVEL: 'warn',
    // One account publishes the whole load here: its events-per-second allowance is raised past
    // what the service can take, as a platform does for its own capacity.
    LINKHOOKS_EVENTS_PER_SECOND: '1000000',
    LINKHOOKS_EVENTS_BURST: '1000000',
    // Its share of the worker is the whole worker, as the bare loop's and each peer's 64 requests
    // open (the library part does the same); by default one account holds at most 56 of 64, and
    // 48 of an origin's 56.
    LINKHOOKS_PER_ACCOUNT_CAP: '64',
    LINKHOOKS_PER_ORIGIN_CAP: '64',
    LINKHOOKS_PER_ACCOUNT_AT_ORIGIN_CAP: '64',
    NODE_EXTRA_CA_CERTS: caFile,
    ...settings,
  };
  await runCli(cli, ['migrate', '--db', db], env);
  const account = async (name) =>
    JSON.parse(
      await runCli(
        cli,
        ['accounts', 'create', '--name', name, '--plan', 'business', '--json', '--db', db],
        env,
      ),
    );
  const delivering = await account('Bench delivering');
  const quiet = await account('Bench ingest only');
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs,
      cli,
      'serve',
      '--db',
      db,
      '--port',
      String(port),
      '--host',
      '127.0.0.1',
      '--allow-private-networks',
    ],
    { env, stdio: ['ignore', process.env.LINKHOOKS_BENCH_SERVICE_STDOUT ? 'inherit' : 'ignore', 'inherit'] },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  onCleanup(async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await withTimeout(exited, 30_000, 'the service to stop').catch(() => child.kill('SIGKILL'));
  });
  const call = httpClient(`http://127.0.0.1:${port}`);
  for (let i = 0; ; i++) {
    const up = await call('GET', '/healthz').catch(() => null);
    if (up?.status === 200) break;
    check(i < 200 && child.exitCode === null, 'the service did not come up within 10 s');
    await sleep(50);
  }
  for (const [i, o] of ctx.receiver.origins.entries()) {
    const res = await call(
      'POST',
      '/v1/endpoints',
      { url: `${o}/hooks/${i}`, events: ['click'] },
      delivering.api_key,
    );
    check(res.status === 201, `creating an endpoint answered ${res.status}: ${res.text}`);
  }
  return {
    call,
    delivering: delivering.id,
    quiet: quiet.id,
    keys: { delivering: delivering.api_key, quiet: quiet.api_key },
    base: `http://127.0.0.1:${port}`,
    token: TOKEN,
    pid: child.pid,
  };
}

/** `call(method, path, body, auth)` over a pool of keep-alive connections, as the platform's clients. */
function httpClient(origin) {
  const pool = new Pool(origin, { connections: SERVICE.clients + 8, pipelining: 1 });
  onCleanup(() => pool.close());
  return async (method, path, body, auth) => {
    const res = await pool.request({
      method,
      path,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${auth}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    return { status: res.statusCode, text };
  };
}

/**
 * The ingest floor (bench/ingest-floor.mjs) in its own process, with a `call` like the service's:
 * the same ingest rounds against it give what HTTP and JSON alone allow on this machine.
 */
export async function startIngestFloor() {
  const child = forkTracked('./ingest-floor.mjs');
  const ready = new Promise((resolve) => child.once('message', resolve));
  child.send({ type: 'listen' });
  const { port } = await withTimeout(ready, 10_000, 'the ingest floor server');
  return { call: httpClient(`http://127.0.0.1:${port}`), quiet: 'acct_floor', token: TOKEN, floor: true };
}

/**
 * What the service's /metrics says: its event-loop delay p99 since the previous scrape (prom-client
 * resets it per scrape), the CPU its process has used so far (all its threads, in seconds), and the
 * commits its publishes have taken part in (NaN from a build without that count). The delay's
 * gauge holds the time between samples, taken every EVENT_LOOP_SAMPLE_MS, so the delay is what lies
 * beyond that (an idle service reads about 10 ms there, a delay of about 0).
 */
async function scrape(service) {
  const { text } = await service.call('GET', '/metrics');
  // The name, or the one builds before the metrics' rename gave it (bench/service-ab.mjs runs them).
  const gauge = (name, older) => {
    const m = new RegExp(`^(?:${name}|${older}) (\\S+)$`, 'm').exec(text);
    check(m, `the service reported no ${name}`);
    return Number(m[1]);
  };
  return {
    loopP99: loopDelayMs(
      gauge(
        'linkhooks_nodejs_eventloop_lag_p99_seconds',
        'linkhooks_process_nodejs_eventloop_lag_p99_seconds',
      ) * 1000,
      EVENT_LOOP_SAMPLE_MS,
    ),
    cpuSeconds: gauge('linkhooks_process_cpu_seconds_total', 'linkhooks_process_process_cpu_seconds_total'),
    commits: Number(/^linkhooks_publish_commits_total (\S+)$/m.exec(text)?.[1] ?? Number.NaN),
  };
}

/** `total` POSTs from `clients` lanes; `make(i)` gives the path and body of the i-th. */
async function burst(service, total, clients, make) {
  let next = 0;
  const lane = async () => {
    while (next < total) {
      const { path, body, expect } = make(next++);
      const res = await service.call('POST', path, body, service.token);
      check(res.status === 202, `ingest answered ${res.status}: ${res.text.slice(0, 200)}`);
      expect?.(JSON.parse(res.text));
    }
  };
  await Promise.all(Array.from({ length: clients }, lane));
}

const ingestBody = (accountId, data) => ({ account_id: accountId, event: 'click', data });

/** The b-th batch request of `size` clicks (ids `${tag}` + index) for `accountId`, for burst(). */
const batchRequest = (accountId, click, tag, size, b) => ({
  path: '/internal/v1/events/batch',
  body: {
    events: Array.from({ length: size }, (_, i) => ingestBody(accountId, click(tag, b * size + i))),
  },
  expect: (r) =>
    check(
      r.results.every((x) => x.status === 202),
      'a batch item was refused',
    ),
});

/**
 * Starts reading the service's CPU; the reading it answers takes the count of events or deliveries
 * done since: the service's CPU per one (all its threads, its ingest requests included), of it its
 * event loop's (what bounds a service whose loop is the busiest thread), the loop delay p99 since
 * (the scrape at the start resets it), and the shares of the time since that the loop's thread ran
 * and that it was ready to run but waited for a core: together near 1, the loop bounds the round.
 */
async function cpuReading(service) {
  const { cpuSeconds, commits } = await scrape(service);
  const main = mainThreadTimes(service.pid);
  const started = monotonicMs();
  return async (count) => {
    const mainAfter = mainThreadTimes(service.pid);
    const wallUs = (monotonicMs() - started) * 1000;
    const after = await scrape(service);
    return {
      cpuUs: ((after.cpuSeconds - cpuSeconds) * 1e6) / count,
      mainUs: (mainAfter.cpuUs - main.cpuUs) / count,
      loopP99: after.loopP99,
      // The shares of the round its event loop ran and waited for a core (cpu-meter.mjs).
      loopRunShare: (mainAfter.cpuUs - main.cpuUs) / wallUs,
      loopWaitShare: (mainAfter.waitUs - main.waitUs) / wallUs,
      // An ingest round's events over the commits that held them: the group commit's size.
      perCommit: count / (after.commits - commits),
    };
  };
}

/** An ingest round of `events` events sent by `send`: events/s, and for the service cpuReading's figures. */
async function ingestRound(service, events, send) {
  const read = service.floor ? null : await cpuReading(service);
  const started = monotonicMs();
  await send();
  const rate = events / ((monotonicMs() - started) / 1000);
  return read ? { rate, ...(await read(events)) } : { rate, loopP99: 0 };
}

/** Single-event ingest, no endpoint subscribed. */
export const singleIngestRound = (service, click) =>
  ingestRound(service, SERVICE.singleEvents, () =>
    burst(service, SERVICE.singleEvents, SERVICE.clients, (i) => ({
      path: '/internal/v1/events',
      body: ingestBody(service.quiet, click('one', i)),
    })),
  );

/** Batch ingest of SERVICE.batchSize events per request, no endpoint subscribed. */
export const batchIngestRound = (service, click) =>
  ingestRound(service, SERVICE.batchEvents, () =>
    burst(service, SERVICE.batchEvents / SERVICE.batchSize, SERVICE.batchClients, (b) =>
      batchRequest(service.quiet, click, 'bat', SERVICE.batchSize, b),
    ),
  );

/** The bursts whose event-loop figures part 5 reports, in the order its rows name them. */
const BURSTS = ['single', 'batch', 'delivery'];

/**
 * A peer's two ways of enqueueing (bench/peers), each with the key of its samples and the label of
 * its rows: the workload of single-event ingest, each click's jobs in a call of their own from as
 * many concurrent producers as the service has clients; and that of the batch requests, `batch`
 * jobs a call, one call after another.
 */
const peerWays = (peer, batch) => [
  {
    key: `peer ${peer.name}`,
    label: `${peer.name} (${peer.store}), a click a call`,
    way: { producers: SERVICE.clients },
  },
  { key: `peer ${peer.name} batched`, label: `${peer.name}, ${fmtInt(batch)} jobs a call`, way: { batch } },
];

/**
 * Ingest + delivery: SERVICE.deliveryEvents single-event ingests to the account with 8 endpoints,
 * timed from the first request until the receiver has answered every delivery. `batched`: the same
 * clicks as batches of SERVICE.deliveryBatch, posted one after another, as the peers' batched rounds
 * enqueue.
 */
export async function deliveryRound(ctx, service, click, { batched = false } = {}) {
  const expected = SERVICE.deliveryEvents * ctx.receiver.origins.length;
  const before = (await ctx.receiver.stats()).requests;
  const read = await cpuReading(service);
  const started = monotonicMs();
  if (batched) {
    await burst(service, SERVICE.deliveryEvents / SERVICE.deliveryBatch, 1, (b) =>
      batchRequest(service.delivering, click, 'dlb', SERVICE.deliveryBatch, b),
    );
  } else {
    await burst(service, SERVICE.deliveryEvents, SERVICE.clients, (i) => ({
      path: '/internal/v1/events',
      body: ingestBody(service.delivering, click('dlv', i)),
    }));
  }
  // Told by the receiver, not polled: a poll here would add its own CPU to this round's rows (the
  // bare loop and the peers have none).
  const { rejected } = await withTimeout(
    ctx.receiver.reached(before + expected),
    120_000 - (monotonicMs() - started),
    `${fmtInt(expected)} deliveries to the receiver`,
  );
  check(rejected === 0, 'the receiver refused a delivery');
  const rate = expected / ((monotonicMs() - started) / 1000);
  return { rate, deliveries: expected, ...(await read(expected)) };
}

/**
 * The whole part: for each store, the service started by its CLI; rounds interleaved with the bare
 * loop and the job-queue peers. `stores`: [{ label, db, file?, server? }], `db` the `--db` of a
 * fresh database, `file` a SQLite one's file (its WAL's size is reported), `server` the database
 * server it runs on (a label of cpu-meter.mjs SERVERS). `bare()` and each of `peers`'
 * `round()` run one round and resolve with `{ rate, deliveries }`.
 * Resolves with the figures the summary reads.
 */
export async function runServicePart(ctx, { bare, click, stores, peers = [] }) {
  // LINKHOOKS_BENCH_SERVICE_ENV: variables set over the bench's own in the services' environment.
  const settings = envOf('LINKHOOKS_BENCH_SERVICE_ENV');
  // A peer's batched round enqueues what the batch requests bring: each one's clicks × the endpoints.
  const peerBatch = SERVICE.deliveryBatch * ctx.receiver.origins.length;
  const waysOf = new Map(peers.map((peer) => [peer, peerWays(peer, peerBatch).map((w) => ({ peer, ...w }))]));
  const ways = [...waysOf.values()].flat();
  console.log(
    `\n5. The service as the platform runs it: linkhooks-sender serve (started by its CLI), driven over HTTP by ${SERVICE.clients}`,
  );
  console.log(
    `   clients. Ingest only: ${fmtInt(SERVICE.singleEvents)} single-event POSTs, ${fmtInt(SERVICE.batchEvents)} events in batches of ${SERVICE.batchSize} (${SERVICE.batchClients} clients);`,
  );
  console.log(
    `   ingest + delivery: ${SERVICE.deliveryEvents} clicks to 8 endpoints (${fmtInt(SERVICE.deliveryEvents * 8)} deliveries), timed until the receiver has every one,`,
  );
  console.log(
    "   beside the bare undici loop and job-queue peers (one job per delivery) in the same rounds, each click's 8 jobs",
  );
  console.log(
    `   enqueued in a call of their own by ${SERVICE.clients} concurrent producers. Batched ingest + delivery: the same clicks as`,
  );
  console.log(
    `   ${SERVICE.deliveryEvents / SERVICE.deliveryBatch} batch requests of ${SERVICE.deliveryBatch}, one after another, beside the peers enqueueing ${fmtInt(peerBatch)} jobs a call, one call after another.`,
  );
  console.log(
    `   Event-loop delay: the service's own p99 during each burst (its /metrics), beyond its ${EVENT_LOOP_SAMPLE_MS} ms sampling\n   interval, and the share of each burst its thread waited for a core (/proc).\n   Median of ${SERVICE.rounds} rounds, after ${SERVICE.warmupRounds} warm-up rounds of each kind.`,
  );
  console.log(
    '   Ingest floor: the same clients against a node:http server that only parses each body and answers 202.',
  );
  console.log(
    "   CPU per delivery: the service's own (all its threads, its ingest included) over each ingest + delivery round.",
  );
  if (Object.keys(settings).length > 0) {
    console.log(`   The services run with ${JSON.stringify(settings)} (LINKHOOKS_BENCH_SERVICE_ENV).`);
  }
  const results = {};
  const services = [];
  for (const store of stores)
    services.push({ ...store, service: await startService(ctx, store.db, { env: settings }) });
  const floor = await startIngestFloor();
  // SERVICE.warmupRounds of each kind first, not counted, for every sender alike: a service that
  // has run a while has its hot paths compiled, and early rounds would otherwise measure the JIT.
  // The bare loop and the peers open their connections here, and keep them (the receiver keeps an
  // idle connection 60 s), as the services keep theirs.
  for (let round = 0; round < SERVICE.warmupRounds; round++) {
    for (const { service } of services) {
      await singleIngestRound(service, click);
      await batchIngestRound(service, click);
      await deliveryRound(ctx, service, click);
      await deliveryRound(ctx, service, click, { batched: true });
    }
    await singleIngestRound(floor, click);
    await batchIngestRound(floor, click);
    await bare();
    for (const { peer, way } of ways) await peer.round(way);
  }
  const samples = new Map();
  const add = (key, value) => samples.set(key, [...(samples.get(key) ?? []), value]);
  /**
   * A burst's event-loop figures, kept under `<label> loop <kind>`, `<label> loop run <kind>` and
   * `<label> loop wait <kind>` (BURSTS).
   */
  const addBurst = (label, kind, { loopP99, loopRunShare, loopWaitShare }) => {
    add(`${label} loop ${kind}`, loopP99);
    add(`${label} loop run ${kind}`, loopRunShare);
    add(`${label} loop wait ${kind}`, loopWaitShare);
  };
  // A delivery round, its CPU per delivery by part kept under `<key> cpu <part>` (CPU_PARTS).
  // `server`: the database server it runs on (cpu-meter.mjs SERVERS), if one. The sender is this
  // process, with a service's own CPU per delivery (from its /metrics: `round.cpuUs`) beside it.
  const metered = async (key, server, run) => {
    const wal = server === 'PostgreSQL' ? ctx.postgres?.walSoFar : undefined;
    const walBefore = await wal?.();
    const stop = await startCpuMeter(ctx.receiver, server);
    const round = await run();
    const cpu = await stop();
    if (walBefore) {
      const walAfter = await wal();
      const records = await ctx.postgres.walRecordsBetween(walBefore.lsn, walAfter.lsn);
      add(`${key} wal records`, records === null ? null : records / round.deliveries);
      add(`${key} wal bytes`, (walAfter.bytes - walBefore.bytes) / round.deliveries);
    }
    const per = (us) => us / round.deliveries;
    const sender = per(cpu.ownUs) + (round.cpuUs ?? 0);
    const db = server ? per(cpu.serverUs) : 0;
    add(`${key} cpu sender`, sender);
    add(`${key} cpu database`, db);
    add(`${key} cpu receiver`, per(cpu.receiverUs));
    add(`${key} cpu all`, sender + db + per(cpu.receiverUs));
    return round;
  };
  for (let round = 0; round < SERVICE.rounds; round++) {
    add('floor single', (await singleIngestRound(floor, click)).rate);
    add('floor batch', (await batchIngestRound(floor, click)).rate);
    for (const { label, server, service } of services) {
      const one = await singleIngestRound(service, click);
      add(`${label} single`, one.rate);
      add(`${label} single per commit`, one.perCommit);
      addBurst(label, 'single', one);
      const many = await batchIngestRound(service, click);
      add(`${label} batch`, many.rate);
      add(`${label} batch per commit`, many.perCommit);
      addBurst(label, 'batch', many);
      const flow = await metered(label, server ?? null, () => deliveryRound(ctx, service, click));
      add(`${label} delivery`, flow.rate);
      add(`${label} cpu`, flow.cpuUs);
      add(`${label} cpu main`, flow.mainUs);
      addBurst(label, 'delivery', flow);
      const batched = await metered(`${label} batched`, server ?? null, () =>
        deliveryRound(ctx, service, click, { batched: true }),
      );
      add(`${label} batched delivery`, batched.rate);
    }
    add('bare', (await metered('bare', null, bare)).rate);
    // A peer's two ways take turns at going first, so that neither always follows the other's writes.
    for (const own of waysOf.values()) {
      for (const { peer, key, way } of round % 2 ? [...own].reverse() : own)
        add(key, (await metered(key, peer.store, () => peer.round(way))).rate);
    }
  }
  const row = (name, key, unit) =>
    console.log(
      `   ${name.padEnd(44)}${fmtInt(median(samples.get(key))).padStart(9)} ${unit.padEnd(13)}${fmtRange(samples.get(key))}`,
    );
  console.log(`   ${''.padEnd(44)}${'median'.padStart(9)} ${''.padEnd(13)}range`);
  row('bare undici loop', 'bare', 'deliveries/s');
  row('ingest floor, one event per request', 'floor single', 'events/s');
  row(`ingest floor, batches of ${SERVICE.batchSize}`, 'floor batch', 'events/s');
  for (const { label, key } of ways) row(label, key, 'deliveries/s');
  for (const { label } of services) {
    row(`${label}: ingest, one event per request`, `${label} single`, 'events/s');
    row(`${label}: ingest, batches of ${SERVICE.batchSize}`, `${label} batch`, 'events/s');
    // The service's own count (linkhooks_publish_commits_total), where its build has it.
    const perCommit = (kind) => samples.get(`${label} ${kind} per commit`);
    if (perCommit('single').every(Number.isFinite))
      console.log(
        `   ${`${label}: events per commit`.padEnd(44)}${median(perCommit('single')).toFixed(1).padStart(9)} one event per request, ` +
          `${median(perCommit('batch')).toFixed(1)} batches (medians)`,
      );
    row(`${label}: ingest + delivery`, `${label} delivery`, 'deliveries/s');
    row(`${label}: batched ingest + delivery`, `${label} batched delivery`, 'deliveries/s');
    row(`${label}: service CPU per delivery`, `${label} cpu`, 'µs');
    if (samples.get(`${label} cpu main`).every((x) => !Number.isNaN(x)))
      row(`${label}: of it, its event loop's`, `${label} cpu main`, 'µs');
    // Each burst's figure by kind, as `single 12.3, batch …, delivery …`.
    const byBurst = (key, show) =>
      BURSTS.map((k) => `${k} ${show(samples.get(`${label} ${key} ${k}`))}`).join(', ');
    const worst = Math.max(...BURSTS.flatMap((k) => samples.get(`${label} loop ${k}`)));
    console.log(
      `   ${`${label}: event-loop delay p99, worst burst`.padEnd(44)}${worst.toFixed(1).padStart(9)} ms          ` +
        `(${byBurst('loop', (xs) => Math.max(...xs).toFixed(1))})`,
    );
    // Where /proc says it: on a machine whose cores are all busy, part of any delay is this wait.
    // Running and waiting near 100% together, the loop bounds the burst.
    const waits = BURSTS.flatMap((k) => samples.get(`${label} loop wait ${k}`));
    if (waits.every(Number.isFinite)) {
      const pct = (xs) => `${Math.round(100 * median(xs))}%`;
      const runs = BURSTS.flatMap((k) => samples.get(`${label} loop run ${k}`));
      console.log(
        `   ${`${label}: loop running`.padEnd(44)}${pct(runs).padStart(9)}             ` +
          `(${byBurst('loop run', pct)}; medians)`,
      );
      console.log(
        `   ${`${label}: loop waiting for a core`.padEnd(44)}${pct(waits).padStart(9)}             ` +
          `(${byBurst('loop wait', pct)}; medians)`,
      );
    }
    // Paired by round: the service's round beside the floor's of the same round.
    const ofFloor = (kind) => pairedRatio(samples.get(`${label} ${kind}`), samples.get(`floor ${kind}`));
    const singleOfFloor = ofFloor('single');
    console.log(
      `   ${`${label}: ingest / floor`.padEnd(44)}${singleOfFloor.toFixed(2).padStart(9)} one event per request, ` +
        `${ofFloor('batch').toFixed(2)} batches`,
    );
    const bareMedian = median(samples.get('bare'));
    const ratio = median(samples.get(`${label} delivery`)) / bareMedian;
    console.log(`   ${`${label}: ingest + delivery / bare`.padEnd(44)}${ratio.toFixed(2).padStart(9)}`);
    results[label] = {
      singleOfFloor,
      single: median(samples.get(`${label} single`)),
      batch: median(samples.get(`${label} batch`)),
      ratio,
      loopP99: worst,
      delivery: median(samples.get(`${label} delivery`)),
      batchedDelivery: median(samples.get(`${label} batched delivery`)),
    };
  }
  for (const [peer, [perClick, batch]] of waysOf) {
    results[perClick.key] = {
      store: peer.store,
      rate: median(samples.get(perClick.key)),
      batchedRate: median(samples.get(batch.key)),
    };
  }
  results.floor = { single: median(samples.get('floor single')), batch: median(samples.get('floor batch')) };
  // The services are still running: a SQLite one's WAL is as the rounds left it (design D58 holds it
  // near 64 MiB).
  for (const { label, file } of services.filter((s) => s.file)) {
    const wal = statSync(`${file}-wal`, { throwIfNoEntry: false });
    check(wal, `${label}: the service's WAL file is not where the bench looks for it`);
    console.log(
      `   ${`${label}: WAL file after the rounds`.padEnd(44)}${(wal.size / 2 ** 20).toFixed(1).padStart(9)} MiB`,
    );
  }
  printCpu(samples, [
    ['bare undici loop', 'bare'],
    ...ways.map(({ label, key }) => [label, key]),
    ...services.flatMap(({ label }) => [
      [`${label} service`, label],
      [`${label} service, batched ingest`, `${label} batched`],
    ]),
  ]);
  return results;
}

const CPU_PARTS = ['sender', 'database', 'receiver', 'all'];

/**
 * CPU per delivery of the ingest + delivery rounds, by part: the sender (the bare loop; a peer's
 * producer and worker, in this process; a service and the clients that post its events), its
 * database server when it has one on this machine, and the receiver. Where the time goes, not
 * how fast: two cores shared by all of them set the rates above.
 */
function printCpu(samples, rows) {
  const cell = (key, digits = 0) => {
    const xs = samples.get(key);
    // A round left uncounted (null: its WAL records) makes the figure n/a, not a median of fewer.
    const m = xs && !xs.includes(null) ? median(xs) : Number.NaN;
    return (Number.isNaN(m) ? 'n/a' : digits > 0 ? m.toFixed(digits) : fmtInt(m)).padStart(10);
  };
  console.log(
    `\n   CPU per delivery in the ingest + delivery rounds, µs (median of ${SERVICE.rounds} rounds; database: its server's processes on this machine)`,
  );
  console.log(`   ${''.padEnd(44)}${CPU_PARTS.map((h) => h.padStart(10)).join('')}`);
  for (const [name, key] of rows) {
    console.log(`   ${name.padEnd(44)}${CPU_PARTS.map((part) => cell(`${key} cpu ${part}`)).join('')}`);
  }
  // What a PostgreSQL sender writes per delivery: the durable log's rows and index entries against
  // a job queue's one job (a PostgreSQL row's insert, update or delete and each index entry is a
  // WAL record).
  const onPostgres = rows.filter(([, key]) => samples.has(`${key} wal bytes`));
  if (onPostgres.length === 0) return;
  console.log(
    `\n   PostgreSQL's WAL per delivery in the same rounds (median; the whole server's, autovacuum's included)`,
  );
  console.log(`   ${''.padEnd(44)}${'records'.padStart(10)}${'bytes'.padStart(10)}`);
  for (const [name, key] of onPostgres)
    console.log(`   ${name.padEnd(44)}${cell(`${key} wal records`, 1)}${cell(`${key} wal bytes`)}`);
}
