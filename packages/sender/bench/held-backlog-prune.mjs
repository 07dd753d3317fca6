// Retention's hourly pass beside one customer's backlog held for good (design D16): a paused
// endpoint's `--held` deliveries, each of an event older than the retention period, are never
// pruned, and retention walks old events to delete those left without deliveries. Through the
// store of the build at <dist/>, filled in SQL: a first pass (the walk from the oldest, at start),
// then `--rounds` passes an hour apart, each timed, with the event loop's delay p99 and longest
// stall during it.
//
//   node bench/held-backlog-prune.mjs <dist/> [--postgres] [--held 1000000] [--rounds 3]
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { openFilledStore } from './filled-store.mjs';
import { check, cleanup, fmtInt, fmtMs, fmtRange, median, onCleanup, PACKAGE } from './harness.mjs';

const ACCOUNT = 'acct_held';
const HOUR = 3_600_000;
const RETENTION = 30 * 24 * HOUR;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    postgres: { type: 'boolean', default: false },
    held: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '3' },
  },
});
const [held, rounds] = [values.held, values.rounds].map(Number);
check(
  positionals.length === 1,
  'usage: node bench/held-backlog-prune.mjs <dist/> [--postgres] [--held N] [--rounds N]',
);
check(Number.isInteger(held) && held >= 1 && held <= 10_000_000, '--held takes 1 to 10,000,000');
check(Number.isInteger(rounds) && rounds >= 1 && rounds <= 20, '--rounds takes 1 to 20');

const build = await import(join(resolve(PACKAGE, positionals[0]), 'index.js'));

/** The rows, in the SQL both stores take; `series(n)` a table of i from 0 to n - 1. */
const fill = (series, old) => [
  // Paused: '1' reads as true in PostgreSQL's boolean and as 1 in SQLite's integer.
  `INSERT INTO endpoints (id, account_id, url, events, secret, paused, paused_at, created_at, updated_at)
   VALUES ('ep_held', '${ACCOUNT}', 'https://127.0.0.1/hooks/held', '["click"]', 'whsec_bench_not_a_secret', '1', ${old}, ${old}, ${old})`,
  `INSERT INTO events (id, account_id, name, body, created_at)
   SELECT 'evh_' || i, '${ACCOUNT}', 'click', '{}', ${old} + i FROM ${series(held)}`,
  `INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, attempts,
                           next_attempt_at, created_at, updated_at)
   SELECT 'dlh_' || i, 'evh_' || i, 'ep_held', '${ACCOUNT}', 'click', 'held', 0, NULL, ${old} + i, ${old} + i
   FROM ${series(held)}`,
];

/** One pass at `cutoff`, timed, with the event loop's delay while it ran. */
async function pass(store, cutoff) {
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const t = performance.now();
  const pruned = await store.pruneBefore(cutoff);
  const ms = performance.now() - t;
  loop.disable();
  check(pruned === 0, `a pass pruned ${pruned} deliveries; the backlog is held`);
  return { ms, p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 };
}

try {
  const now = Date.now();
  const old = now - RETENTION - 10 * 24 * HOUR;
  const store = await openFilledStore(build, {
    postgres: values.postgres,
    what: 'held',
    fill: (series) => fill(series, old),
    analyzed: ['events', 'deliveries'],
  });
  onCleanup(() => store.close());
  const first = await pass(store, now - RETENTION);
  const later = [];
  for (let r = 1; r <= rounds; r++) later.push(await pass(store, now - RETENTION + r * HOUR));
  check((await store.stats()).queued.held === held, 'the held backlog changed');
  const range = (xs) => `${fmtMs(median(xs))} (${fmtRange(xs, fmtMs)})`;
  console.log(
    `${values.postgres ? 'PostgreSQL' : 'SQLite'}, ${positionals[0]}: retention passes beside ${fmtInt(held)} held deliveries of events past the retention period`,
  );
  console.log(
    `  first pass ${fmtMs(first.ms)} ms (loop p99 ${fmtMs(first.p99)} ms, longest ${fmtMs(first.max)} ms)`,
  );
  console.log(
    `  the next ${rounds}, an hour apart: ${range(later.map((p) => p.ms))} ms; loop p99 ${range(later.map((p) => p.p99))} ms, longest ${range(later.map((p) => p.max))} ms`,
  );
} finally {
  await cleanup();
}
