// What one tenant's statistics requests cost the others, through the CLI-started service. The
// flooding account's endpoint holds a month of attempts (--attempts, 100,000 by default: one every
// 26 s), and it asks for that endpoint's 30-day statistics from FLOODERS clients at once, each
// asking again as soon as it is answered, or after Retry-After when refused (429). Meanwhile the
// delivering account runs part 5's ingest + delivery rounds, and asks for the statistics of one of
// its own endpoints every OWN_EVERY_MS: the time of each answer. Two builds, one service each on a
// fresh database; each round number runs a round with the flood and one without on each build, the
// builds' order and the two kinds' order turning from one round number to the next. Prints, for
// each build and kind of round, the deliveries per second, the delivering account's statistics
// (median and longest answer), and the flood's answers a second by status with the median time
// of those answered. With --search, the flood searches the log instead (`?q=`) for a conversion id
// that --events of the flooding account's events carry (10,000 by default, one delivery each),
// and the delivering account searches its own log for an id no event carries.
//
//   node bench/stats-flood.mjs <A's dist/> <B's dist/> [--sqlite] [--rounds N] [--attempts N]
//                              [--search [--events N]]
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { Pool } from 'undici';
import { pgSchemaName } from './claims.mjs';
import { click } from './click.mjs';
import {
  check,
  cleanup,
  createTestCertificates,
  fmtInt,
  fmtRange,
  median,
  monotonicMs,
  onCleanup,
  PACKAGE,
  PG_URL,
  sleep,
  startReceiver,
  tempDir,
} from './harness.mjs';
import { deliveryRound, SERVICE, startService } from './service.mjs';

const FLOODERS = 16;
const OWN_EVERY_MS = 100; // within the delivering account's API requests a minute, however many rounds
const DAY = 86_400_000;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    sqlite: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '3' },
    attempts: { type: 'string', default: '100000' },
    search: { type: 'boolean', default: false },
    events: { type: 'string', default: '10000' },
  },
});
const events = Number(values.events);
check(Number.isInteger(events) && events >= 1 && events <= 5_000_000, '--events takes 1 to 5,000,000');
/** The conversion id the flooding account's events carry. */
const SHARED = 'conv_flood_shared';
const rounds = Number(values.rounds);
const attempts = Number(values.attempts);
check(
  positionals.length === 2,
  "usage: node bench/stats-flood.mjs <A's dist/> <B's dist/> [--sqlite] [--rounds N] [--attempts N]",
);
check(Number.isInteger(rounds) && rounds >= 1 && rounds <= 50, '--rounds takes 1 to 50');
check(
  Number.isInteger(attempts) && attempts >= 1 && attempts <= 5_000_000,
  '--attempts takes 1 to 5,000,000',
);

/** `attempts` attempts of `endpointId` over the last 30 days, one delivery each, in SQL of the store's kind. */
const FILL = (table, endpointId, now) => `
INSERT INTO ${table} (delivery_id, number, endpoint_id, started_at, duration_ms, status_code, request_headers)
SELECT 'dlv_flood_' || i, 1, '${endpointId}', ${now} - ${30 * DAY} + i * ${Math.floor((30 * DAY) / attempts)},
       20 + i % 300, 200, '{}'
FROM ${values.sqlite ? `(WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${attempts}) SELECT i FROM n)` : `generate_series(1::bigint, ${attempts}) AS s (i)`}`;

const series = (n) =>
  values.sqlite
    ? `(WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${n}) SELECT i FROM n)`
    : `generate_series(1::bigint, ${n}) AS s (i)`;
/** `events` events of `accountId` carrying SHARED, each with a delivery to `endpointId`, in SQL of the store's kind. */
const FILL_SEARCHED = (schema, accountId, endpointId, now) => [
  `INSERT INTO ${schema}events (id, account_id, name, body, created_at, conversion_id)
   SELECT 'evt_flood_' || i, '${accountId}', 'conversion', '{}', ${now} - ${DAY}, '${SHARED}' FROM ${series(events)}`,
  `INSERT INTO ${schema}deliveries (id, event_id, endpoint_id, account_id, event_name, status, attempts,
                                    next_attempt_at, last_status_code, created_at, updated_at)
   SELECT 'dlv_flood_' || i, 'evt_flood_' || i, '${endpointId}', '${accountId}', 'conversion', 'delivered', 1,
          NULL, 200, ${now} - ${DAY}, ${now} - ${DAY}
   FROM ${series(events)}`,
];

/** GETs `path` with `key`: its status and how long it took. */
const getter = (base) => {
  const pool = new Pool(base, { connections: FLOODERS + 2 });
  onCleanup(() => pool.close());
  return async (path, key) => {
    const started = monotonicMs();
    const res = await pool.request({ method: 'GET', path, headers: { authorization: `Bearer ${key}` } });
    await res.body.text();
    return {
      status: res.statusCode,
      ms: monotonicMs() - started,
      retryAfterS: Number(res.headers['retry-after'] ?? 0),
    };
  };
};

/**
 * Runs `lane` on `n` clients until `stop()` is called, each waiting `pauseMs(answer)` between two;
 * resolves with what they read once all have stopped.
 */
function lanes(n, lane, pauseMs) {
  let stopped = false;
  const seen = [];
  const running = Promise.all(
    Array.from({ length: n }, async () => {
      while (!stopped) {
        const answer = await lane();
        seen.push(answer);
        const pause = pauseMs(answer);
        if (pause > 0) await sleep(pause);
      }
    }),
  );
  return async () => {
    stopped = true;
    await running;
    return seen;
  };
}

try {
  const certs = createTestCertificates();
  const receiver = await startReceiver(certs, 8);
  const ctx = { certs, receiver, flows: [] };
  const admin = values.sqlite ? null : new pg.Client({ connectionString: PG_URL });
  if (admin) {
    await admin.connect();
    onCleanup(() => admin.end());
  }
  const services = [];
  for (const build of ['A', 'B']) {
    const dist = positionals[build === 'A' ? 0 : 1];
    let db;
    let fill;
    if (admin) {
      const schema = pgSchemaName(`flood_${build.toLowerCase()}`);
      onCleanup(() => admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
      db = `${PG_URL}?schema=${schema}`;
      fill = async (endpointId, accountId) => {
        if (!values.search) return admin.query(FILL(`"${schema}".attempts`, endpointId, Date.now()));
        for (const sql of FILL_SEARCHED(`"${schema}".`, accountId, endpointId, Date.now()))
          await admin.query(sql);
        await admin.query(`ANALYZE "${schema}".events, "${schema}".deliveries`);
      };
    } else {
      const file = join(tempDir(`linkhooks-bench-flood-${build}-`), 'service.db');
      db = `sqlite:${file}`;
      fill = async (endpointId, accountId) => {
        const raw = new Database(file);
        raw.pragma('busy_timeout = 10000');
        // Attempts of deliveries that are not in the log: the statistics read the attempts alone.
        raw.pragma('foreign_keys = OFF');
        if (values.search)
          for (const sql of FILL_SEARCHED('', accountId, endpointId, Date.now())) raw.exec(sql);
        else raw.exec(FILL('attempts', endpointId, Date.now()));
        raw.close();
      };
    }
    const service = await startService(ctx, db, { cli: join(resolve(PACKAGE, dist), 'cli.js') });
    const made = await service.call(
      'POST',
      '/v1/endpoints',
      { url: `${receiver.origins[0]}/hooks/flood`, events: ['click'] },
      service.keys.quiet,
    );
    check(made.status === 201, `creating the flooded endpoint answered ${made.status}: ${made.text}`);
    const flooded = JSON.parse(made.text).id;
    await fill(flooded, service.quiet);
    const listed = await service.call('GET', '/v1/endpoints', undefined, service.keys.delivering);
    const own = JSON.parse(listed.text).data[0].id;
    services.push({ build, service, flooded, own, get: getter(service.base) });
  }

  const round = async ({ service, flooded, own, get }, flood) => {
    const stopFlood = flood
      ? lanes(
          FLOODERS,
          () =>
            get(
              values.search ? `/v1/deliveries?q=${SHARED}` : `/v1/endpoints/${flooded}/stats?window=30d`,
              service.keys.quiet,
            ),
          (a) => (a.status === 429 ? a.retryAfterS * 1000 : 0),
        )
      : null;
    const stopOwn = lanes(
      1,
      () =>
        get(
          values.search ? '/v1/deliveries?q=clk_carried_by_none' : `/v1/endpoints/${own}/stats?window=24h`,
          service.keys.delivering,
        ),
      () => OWN_EVERY_MS,
    );
    let result;
    const started = monotonicMs();
    try {
      result = await deliveryRound(ctx, service, (prefix, n) => click(prefix.slice(0, 3), n));
    } finally {
      const ownAnswers = await stopOwn();
      const floodAnswers = stopFlood ? await stopFlood() : [];
      result = { ...result, ownAnswers, floodAnswers, seconds: (monotonicMs() - started) / 1000 };
    }
    const longest = Math.max(...result.ownAnswers.map((a) => a.ms));
    console.error(
      `  (${flood ? 'flood' : 'quiet'} round: ${fmtInt(result.rate)} deliveries/s, own ${values.search ? 'searches' : 'statistics'} up to ${longest.toFixed(0)} ms, ${result.floodAnswers.length} flood answers)`,
    );
    check(
      result.ownAnswers.every((a) => a.status === 200),
      `the delivering account's ${values.search ? 'searches' : 'statistics'} answered ${result.ownAnswers.find((a) => a.status !== 200)?.status}`,
    );
    return result;
  };
  const samples = new Map();
  const add = (build, flood, r) => {
    const key = `${build} ${flood ? 'flood' : 'quiet'}`;
    samples.set(key, [...(samples.get(key) ?? []), r]);
  };
  for (const side of services) for (const flood of [false, true]) await round(side, flood);
  for (let r = 0; r < rounds; r++) {
    for (const flood of [false, true]) {
      for (const side of r % 2 === 0 ? services : [...services].reverse())
        add(side.build, flood, await round(side, flood));
    }
  }
  console.log(
    `${admin ? 'PostgreSQL' : 'SQLite'} service, ${fmtInt(SERVICE.deliveryEvents * 8)} deliveries a round; ${values.search ? `another account's search of its log for an id ${fmtInt(events)} events carry` : `another account's 30-day statistics of ${fmtInt(attempts)} attempts`} asked by ${FLOODERS} clients at once ("flood") or none; A ${positionals[0]}, B ${positionals[1]}; median of ${rounds} rounds each`,
  );
  const ms = (x) => x.toFixed(1);
  for (const [key, rs] of samples) {
    const own = rs.flatMap((r) => r.ownAnswers.map((a) => a.ms));
    const floods = rs.flatMap((r) => r.floodAnswers);
    const seconds = rs.reduce((sum, r) => sum + r.seconds, 0);
    const byStatus = [...new Set(floods.map((a) => a.status))]
      .sort()
      .map((s) => `${s} ${(floods.filter((a) => a.status === s).length / seconds).toFixed(1)}/s`)
      .join(', ');
    const read = floods.filter((a) => a.status === 200).map((a) => a.ms);
    const flood = byStatus
      ? `; the flood's answers ${byStatus}${read.length > 0 ? `, those read in ${ms(median(read))} ms (median)` : ''}`
      : '';
    const rates = rs.map((r) => r.rate);
    console.log(
      `  ${key.padEnd(8)} deliveries ${fmtInt(median(rates))}/s (${fmtRange(rates)}); its own ${values.search ? 'searches' : 'statistics'} ${ms(median(own))} ms median, ${ms(Math.max(...own))} ms longest (${own.length} answers)${flood}`,
    );
  }
} finally {
  await cleanup();
}
