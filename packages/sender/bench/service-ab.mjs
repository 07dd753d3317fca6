// Two builds of the CLI-started service, round by round: each `linkhooks-sender serve` on a fresh
// database of its own, ingest + delivery rounds (bench/service.mjs, as part 5 runs them) alternated
// between the two, A then B, then B then A, after the warm-up rounds. A change that moves the
// service by a few percent hides in the spread of whole runs compared one after the other (the
// machine's speed drifts from one minute to the next); paired round by round, each ratio is of two
// rounds a few seconds apart. Prints, for A and B, the deliveries per second, the service's CPU per
// delivery (all its threads) and its event loop's, and the database server's on PostgreSQL:
// medians with their ranges, and B over A as the median of per-round ratios.
//
//   node bench/service-ab.mjs <A's dist/> <B's dist/> [--postgres] [--batched] [--rounds N]
//
// A build's dist/ is a folder with its cli.js, as `pnpm build` leaves it (copy one aside, as
// dist-old/, before building the other); a relative path is read from this package's folder.
// LINKHOOKS_BENCH_NODE_ARGS gives both sides Node options, LINKHOOKS_BENCH_NODE_ARGS_B gives B more
// of its own (the same dist/ on both sides weighs those options). An even number of rounds puts
// each side first in half of them.
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { pgSchemaName } from './claims.mjs';
import { click } from './click.mjs';
import { startCpuMeter } from './cpu-meter.mjs';
import {
  check,
  cleanup,
  createTestCertificates,
  fmtInt,
  fmtRange,
  median,
  onCleanup,
  pairedRatio,
  startReceiver,
  tempDir,
} from './harness.mjs';
import { deliveryRound, SERVICE, startService } from './service.mjs';

const PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    postgres: { type: 'boolean', default: false },
    batched: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '12' },
  },
});
const rounds = Number(values.rounds);
check(
  positionals.length === 2 && Number.isInteger(rounds) && rounds > 0,
  "usage: node bench/service-ab.mjs <A's dist/> <B's dist/> [--postgres] [--batched] [--rounds N]",
);
const PACKAGE = fileURLToPath(new URL('..', import.meta.url));
const cliOf = (dist) => join(resolve(PACKAGE, dist), 'cli.js');
const nodeArgsOf = (text) => text?.split(/\s+/).filter(Boolean) ?? [];

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
  const database = async (side) => {
    if (!admin) return `sqlite:${join(tempDir(`linkhooks-bench-ab-${side}-`), 'service.db')}`;
    const schema = pgSchemaName(`ab_${side}`);
    // Registered first, run last (after the service stops): harness.mjs runs cleanups in reverse.
    onCleanup(() => admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
    return `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`;
  };
  const common = nodeArgsOf(process.env.LINKHOOKS_BENCH_NODE_ARGS);
  const sides = {
    A: await startService(ctx, await database('a'), { cli: cliOf(positionals[0]), nodeArgs: common }),
    B: await startService(ctx, await database('b'), {
      cli: cliOf(positionals[1]),
      nodeArgs: [...common, ...nodeArgsOf(process.env.LINKHOOKS_BENCH_NODE_ARGS_B)],
    }),
  };
  const samples = { A: [], B: [] };
  const clickOf = (prefix, n) => click(prefix.slice(0, 3), n);
  for (let r = 0; r < SERVICE.warmupRounds + rounds; r++) {
    for (const side of r % 2 ? ['B', 'A'] : ['A', 'B']) {
      const stop = await startCpuMeter(receiver, admin ? 'PostgreSQL' : null);
      const round = await deliveryRound(ctx, sides[side], clickOf, { batched: values.batched });
      const { serverUs } = await stop();
      if (admin) check(Number.isFinite(serverUs), 'no PostgreSQL process on this machine to measure (/proc)');
      if (r >= SERVICE.warmupRounds) samples[side].push({ ...round, serverUs: serverUs / round.deliveries });
    }
  }
  console.log(
    `${admin ? 'PostgreSQL' : 'SQLite'} service, ${fmtInt(SERVICE.deliveryEvents * 8)} deliveries a round${values.batched ? ' (batched ingest)' : ''}; A ${positionals[0]}, B ${positionals[1]}; median of ${rounds} rounds each, alternated`,
  );
  const rows = [
    ['deliveries per second', '/s', (s) => s.rate],
    ['service CPU per delivery', 'µs', (s) => s.cpuUs],
    ['  of it, its event loop', 'µs', (s) => s.mainUs],
    ...(admin ? [['database CPU per delivery', 'µs', (s) => s.serverUs]] : []),
  ];
  for (const [name, unit, of] of rows) {
    const a = samples.A.map(of);
    const b = samples.B.map(of);
    // Its event loop's CPU is read from /proc/<pid>/task, where it can be.
    if (![...a, ...b].every(Number.isFinite)) continue;
    console.log(
      `  ${name.padEnd(26)} A ${fmtInt(median(a))} ${unit} (${fmtRange(a)}), B ${fmtInt(median(b))} ${unit} (${fmtRange(b)}): B/A ${pairedRatio(b, a).toFixed(3)}`,
    );
  }
} finally {
  await cleanup();
}
