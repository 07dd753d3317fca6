// Whether a quiet spell slows the burst after it, apart from the machine's drift: one CLI-started
// SQLite service, part 5's single-event ingest rounds (service.mjs) in pairs, one round right after
// the one before and one after `--idle-s` seconds with nothing to do, in either order from one pair
// to the next. Paired so, each ratio is of two rounds seconds apart; runs compared one after another
// (service-ab.mjs with and without --idle-s) put minutes of the machine's drift between them.
// Prints, for each kind of round, the events per second and the service's CPU per event (medians
// with their ranges), and after-quiet over back-to-back as the median of per-pair ratios.
//
//   node bench/quiet-spell.mjs [--pairs N] [--idle-s N]
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { click } from './click.mjs';
import {
  cleanup,
  createTestCertificates,
  fmtInt,
  fmtRange,
  median,
  pairedRatio,
  sleep,
  startReceiver,
  tempDir,
} from './harness.mjs';
import { SERVICE, singleIngestRound, startService } from './service.mjs';

const USAGE = 'usage: node bench/quiet-spell.mjs [--pairs N (1 to 50)] [--idle-s N (1 to 120)]';
function optionsOf() {
  try {
    const { values } = parseArgs({
      options: { pairs: { type: 'string', default: '8' }, 'idle-s': { type: 'string', default: '12' } },
    });
    const pairs = Number(values.pairs);
    const idleS = Number(values['idle-s']);
    if (
      Number.isInteger(pairs) &&
      pairs >= 1 &&
      pairs <= 50 &&
      Number.isInteger(idleS) &&
      idleS >= 1 &&
      idleS <= 120
    )
      return { pairs, idleS };
  } catch {
    // an option it does not know, or one without its value: the usage says
  }
  console.error(USAGE);
  process.exit(2);
}
const { pairs, idleS } = optionsOf();

try {
  const certs = createTestCertificates();
  const ctx = { certs, receiver: await startReceiver(certs, 8), flows: [] };
  const service = await startService(ctx, `sqlite:${join(tempDir('linkhooks-bench-quiet-'), 'service.db')}`);
  for (let r = 0; r < SERVICE.warmupRounds; r++) await singleIngestRound(service, click);
  const back = [];
  const quiet = [];
  for (let p = 0; p < pairs; p++) {
    // Even pairs: back-to-back first (right after the pair before), then the quiet one; odd pairs
    // the other way, the back-to-back round then following the quiet one's burst.
    const order = p % 2 === 0 ? [back, quiet] : [quiet, back];
    for (const into of order) {
      if (into === quiet) await sleep(idleS * 1000);
      into.push(await singleIngestRound(service, click));
    }
  }
  console.log(
    `SQLite service, ${fmtInt(SERVICE.singleEvents)} events a round, one a request; ${pairs} pairs of rounds, one back-to-back, one after ${idleS} s quiet`,
  );
  const rows = [
    ['events per second', '/s', (s) => s.rate],
    ['service CPU per event', 'µs', (s) => s.cpuUs],
  ];
  for (const [name, unit, of] of rows) {
    const b = back.map(of);
    const q = quiet.map(of);
    console.log(
      `  ${name.padEnd(22)} back-to-back ${fmtInt(median(b))} ${unit} (${fmtRange(b)}), after quiet ${fmtInt(median(q))} ${unit} (${fmtRange(q)}): quiet/back ${pairedRatio(q, b).toFixed(3)}`,
    );
  }
} finally {
  await cleanup();
}
