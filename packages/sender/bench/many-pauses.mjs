// One account pausing, then resuming, many endpoints at once, each with a backlog (design D83):
// every pause and resume moves its endpoint's queued deliveries in steps. Through the engine of the
// build at <dist/>, on a store filled in SQL (one account's `--endpoints` endpoints with `--queued`
// deliveries each awaiting a retry due tomorrow), while another tenant publishes one event after
// another: the time until every move is done, the event loop's delay p99 and longest stall, and
// the other tenant's slowest publish. Each of `--rounds` rounds pauses all the endpoints, then
// resumes them all; a third account's endpoint, with as large a backlog, is paused and resumed
// once the first account's changes are all asked, and its resume timed until it is answered (a
// resume is answered once its deliveries are moved, or after 10 s with the rest going on).
//
//   node bench/many-pauses.mjs <dist/> [--postgres] [--endpoints 100] [--queued 1000] [--rounds 3]
import { join, resolve } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { openFilledStore } from './filled-store.mjs';
import { check, cleanup, fmtInt, fmtMs, fmtRange, median, onCleanup, PACKAGE } from './harness.mjs';
import { whilePublishing } from './scale.mjs';

const ACCOUNT = 'acct_pauses';
const OTHER = 'acct_pauses_other';
/** The account whose one endpoint moves beside the first account's many. */
const THIRD = 'acct_pauses_third';
const DAY = 86_400_000;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    postgres: { type: 'boolean', default: false },
    endpoints: { type: 'string', default: '100' },
    queued: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '3' },
  },
});
const [endpoints, queued, rounds] = [values.endpoints, values.queued, values.rounds].map(Number);
check(
  positionals.length === 1,
  'usage: node bench/many-pauses.mjs <dist/> [--postgres] [--endpoints N] [--queued N] [--rounds N]',
);
check(Number.isInteger(endpoints) && endpoints >= 1 && endpoints <= 1_000, '--endpoints takes 1 to 1,000');
check(Number.isInteger(queued) && queued >= 1 && queued <= 100_000, '--queued takes 1 to 100,000');
check(Number.isInteger(rounds) && rounds >= 1 && rounds <= 20, '--rounds takes 1 to 20');

const build = await import(join(resolve(PACKAGE, positionals[0]), 'index.js'));
const { createSender } = build;

/** The rows, in the SQL both stores take; `series(n)` a table of i from 0 to n - 1. */
const fill = (series, now) => [
  `INSERT INTO endpoints (id, account_id, url, events, secret, created_at, updated_at)
   SELECT 'ep_p' || i, '${ACCOUNT}', 'https://127.0.0.1/hooks/' || i, '["click"]', 'whsec_bench_not_a_secret', ${now}, ${now}
   FROM ${series(endpoints)}`,
  `INSERT INTO endpoints (id, account_id, url, events, secret, created_at, updated_at)
   VALUES ('ep_other', '${OTHER}', 'https://127.0.0.1/hooks/other', '["click"]', 'whsec_bench_not_a_secret', ${now}, ${now}),
          ('ep_third', '${THIRD}', 'https://127.0.0.1/hooks/third', '["click"]', 'whsec_bench_not_a_secret', ${now}, ${now})`,
  `INSERT INTO events (id, account_id, name, body, created_at)
   SELECT 'evp_' || i, '${ACCOUNT}', 'click', '{}', ${now} - 60000 FROM ${series(endpoints * queued)}`,
  `INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, attempts,
                           next_attempt_at, last_status_code, created_at, updated_at)
   SELECT 'dlp_' || i, 'evp_' || i, 'ep_p' || (i % ${endpoints}), '${ACCOUNT}', 'click', 'awaiting_retry', 1,
          ${now} + ${DAY}, 503, ${now} - 60000, ${now} - 60000
   FROM ${series(endpoints * queued)}`,
  `INSERT INTO events (id, account_id, name, body, created_at)
   SELECT 'evt_' || i, '${THIRD}', 'click', '{}', ${now} - 60000 FROM ${series(queued)}`,
  `INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, attempts,
                           next_attempt_at, last_status_code, created_at, updated_at)
   SELECT 'dlt_' || i, 'evt_' || i, 'ep_third', '${THIRD}', 'click', 'awaiting_retry', 1,
          ${now} + ${DAY}, 503, ${now} - 60000, ${now} - 60000
   FROM ${series(queued)}`,
];

try {
  const now = Date.now();
  const store = await openFilledStore(build, {
    postgres: values.postgres,
    what: 'pauses',
    fill: (series) => fill(series, now),
  });
  onCleanup(() => store.close());
  const sender = createSender({ store });
  onCleanup(() => sender.stop(0));
  const ids = Array.from({ length: endpoints }, (_, i) => `ep_p${i}`);
  const samples = { pause: [], resume: [] };
  /** How long the third account's resume took to be answered, each round. */
  const thirdResumed = [];
  for (let r = 0; r < rounds; r++) {
    for (const kind of ['pause', 'resume']) {
      const change = (accountId, id) =>
        kind === 'pause' ? sender.pauseEndpoint(accountId, id) : sender.resumeEndpoint(accountId, id);
      // One change a turn of the event loop, as requests arriving together are each read.
      const changeAll = async () => {
        const changed = [];
        for (const id of ids) {
          changed.push(change(ACCOUNT, id));
          await nextTurn();
        }
        const t = performance.now();
        await change(THIRD, 'ep_third');
        if (kind === 'resume') thirdResumed.push(performance.now() - t);
        await Promise.all(changed);
      };
      samples[kind].push(await whilePublishing(sender, [OTHER], changeAll));
      const { held } = (await store.stats()).queued;
      check(
        held === (kind === 'pause' ? (endpoints + 1) * queued : 0),
        `after the ${kind}s, ${held} deliveries held`,
      );
      check((await store.endpointsSettling(10)).length === 0, 'a move of deliveries was left unfinished');
    }
  }
  console.log(
    `${values.postgres ? 'PostgreSQL' : 'SQLite'}, ${positionals[0]}: ${endpoints} endpoints of one account paused at once, then resumed, ${fmtInt(queued)} deliveries queued each; medians of ${rounds} rounds (ranges)`,
  );
  const range = (xs, fmt = fmtMs) => `${fmt(median(xs))} (${fmtRange(xs, fmt)})`;
  for (const [kind, ms] of Object.entries(samples)) {
    console.log(
      `  ${kind.padEnd(7)} all moved in ${range(
        ms.map((m) => m.ms),
        fmtInt,
      )} ms; loop delay p99 ${range(ms.map((m) => m.loopP99))} ms, longest ${range(ms.map((m) => m.loopMax))} ms; another tenant's slowest publish ${range(ms.map((m) => m.slowest[OTHER]))} ms`,
    );
  }
  console.log(
    `  a third account's resume of one endpoint (${fmtInt(queued)} held) answered in ${range(thirdResumed, fmtInt)} ms`,
  );
} finally {
  await cleanup();
}
