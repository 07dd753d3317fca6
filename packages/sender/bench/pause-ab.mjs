// Two builds' pause and resume of an endpoint with a backlog, through the engine, round by round
// (A, B, A, B…), each round on a fresh database of its own: the endpoint holds --queued deliveries
// due now (no worker runs, so nothing claims them), and while it is paused, then resumed,
// until nothing is left to move (the pruning joins steps under way), another tenant and the
// endpoint's own account publish one event after another (on PostgreSQL each publish to the paused
// endpoint share-locks it). Prints, for A and B, the time of each change, the event loop's
// delay p99 and longest stall meanwhile, and the other tenant's and the account's slowest publish:
// medians of the rounds, with their ranges. Design D34: a build that moves a backlog in one
// transaction against one that moves it in steps.
//
//   node bench/pause-ab.mjs <A's dist/> <B's dist/> [--postgres] [--queued N] [--rounds N]
//
// A build's dist/ is a folder with its index.js, as `pnpm build` leaves it (copy one aside, as
// dist-base/, before building the other); a relative path is read from this package's folder.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sampleEventData } from '@linkhooks/protocol';
import pg from 'pg';
import { pgSchemaName } from './claims.mjs';
import { check, cleanup, fmtInt, fmtMs, fmtRange, median, onCleanup, PG_URL, tempDir } from './harness.mjs';
import { whilePublishing } from './scale.mjs';
import { addEndpoints, buildAt } from './store-bench.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    postgres: { type: 'boolean', default: false },
    queued: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '3' },
  },
});
check(
  positionals.length === 2,
  'usage: node bench/pause-ab.mjs <A dist/> <B dist/> [--postgres] [--queued N] [--rounds N]',
);
const QUEUED = Number(values.queued);
const ROUNDS = Number(values.rounds);
check(
  Number.isInteger(QUEUED) && QUEUED >= 1_000 && QUEUED <= 2_000_000,
  '--queued must be 1,000 to 2,000,000',
);
check(Number.isInteger(ROUNDS) && ROUNDS >= 1 && ROUNDS <= 20, '--rounds must be 1 to 20');
const ACCOUNT = 'acct_paused';
const OTHER = 'acct_other';
const click = { event: 'click', data: sampleEventData('click') };
/** The backlog is made faster than an account's default rate allows. */
const UNLIMITED = { eventsPerSecond: 1_000_000, eventsBurst: 1_000_000 };

const builds = await Promise.all(positionals.map(async (dir) => ({ dir, ...(await buildAt(dir)) })));
const dir = tempDir('linkhooks-bench-pause-');
const admin = values.postgres ? new pg.Client({ connectionString: PG_URL }) : null;
if (admin) {
  await admin.connect();
  onCleanup(() => admin.end());
}

/** A fresh store of `build`, its two accounts' endpoints made and the backlog filled. */
async function filled(build, round) {
  let store;
  if (admin) {
    const schema = pgSchemaName(`pause${round}`);
    onCleanup(() => admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
    store = build.createPostgresStore({ connectionString: PG_URL, schema });
  } else {
    store = build.createSqliteStore({
      filename: join(dir, `pause-${round}-${Math.random().toString(36).slice(2)}.db`),
    });
  }
  await store.migrate();
  await addEndpoints(store, ACCOUNT, ['ep_paused']);
  await addEndpoints(store, OTHER, ['ep_other']);
  const sender = build.createSender({ store, quotas: UNLIMITED });
  for (let made = 0; made < QUEUED; made += 1_000) {
    const batch = await sender.publishMany(
      Array.from({ length: Math.min(1_000, QUEUED - made) }, () => ({ accountId: ACCOUNT, ...click })),
    );
    const failed = batch.find((r) => !r.ok);
    check(!failed, `a publish of the backlog failed: ${failed?.error?.message}`);
  }
  await sender.stop(0);
  return store;
}

/** One change (`change` of a sender on `store`) until nothing is left to move (whilePublishing). */
async function timed(build, store, change) {
  const sender = build.createSender({ store });
  const m = await whilePublishing(sender, [OTHER, ACCOUNT], () => change(sender));
  await sender.stop(0);
  return { ...m, otherMax: m.slowest[OTHER], ownMax: m.slowest[ACCOUNT] };
}

const results = builds.map(() => ({ pause: [], resume: [] }));
for (let round = 0; round < ROUNDS; round++) {
  for (const [k, build] of builds.entries()) {
    const store = await filled(build, round);
    try {
      results[k].pause.push(await timed(build, store, (s) => s.pauseEndpoint(ACCOUNT, 'ep_paused')));
      check((await store.stats()).queued.held >= QUEUED, `${build.dir}: the pause left deliveries unheld`);
      results[k].resume.push(await timed(build, store, (s) => s.resumeEndpoint(ACCOUNT, 'ep_paused')));
      check((await store.stats()).queued.held === 0, `${build.dir}: the resume left deliveries held`);
    } finally {
      await store.close();
    }
  }
}

console.log(
  `\nPause and resume of an endpoint holding ${fmtInt(QUEUED)} deliveries, ${values.postgres ? 'PostgreSQL' : 'SQLite'}, ${ROUNDS} round(s) each; medians (ranges), ms:`,
);
for (const change of ['pause', 'resume']) {
  for (const [k, build] of builds.entries()) {
    const rs = results[k][change];
    const of = (key) => {
      const xs = rs.map((r) => r[key]);
      return `${fmtMs(median(xs))} (${fmtRange(xs, fmtMs)})`;
    };
    console.log(
      `  ${change.padEnd(7)} ${'AB'[k]} ${build.dir.padEnd(10)} until moved ${of('ms')}  loop p99 ${of('loopP99')}  loop max ${of('loopMax')}  other tenant's slowest publish ${of('otherMax')}  own account's ${of('ownMax')}`,
    );
  }
}
await cleanup();
