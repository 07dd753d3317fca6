// How many WAL records a PostgreSQL server wrote between two of its WAL positions, counted by
// pg_waldump in the server's own WAL files. pg_stat_wal's `wal_records` cannot say it for a round
// of a second: each backend adds its count to it about once a second while busy and ten seconds
// after it goes idle, so a round's records were counted in later rounds, or none (a round's median
// read 9 records per delivery where pg_waldump counted 27, and 0 for a peer). Used by bench/run.mjs.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { processesNamed, SERVERS } from './cpu-meter.mjs';

const run = promisify(execFile);

/** pg_waldump beside a running server's `postgres` executable on this machine, or null. */
function findWaldump() {
  for (const pid of processesNamed(SERVERS.PostgreSQL) ?? []) {
    try {
      const waldump = join(dirname(readlinkSync(`/proc/${pid}/exe`)), 'pg_waldump');
      if (existsSync(waldump)) return waldump;
    } catch {
      // another user's process, or exited meanwhile
    }
  }
  return null;
}

/**
 * `recordsBetween(from, to)`: the records the server `admin` (a connected pg.Client of a superuser,
 * who may read its data directory) wrote between two of its WAL positions (`pg_lsn` text); null
 * where they cannot be read here (the server on another machine, its WAL files not readable by this
 * user, no pg_waldump). Everything the server wrote counts, autovacuum's and other clients' too.
 */
export async function walRecordCounter(admin) {
  const waldump = findWaldump();
  let walDir = null;
  try {
    const { rows } = await admin.query('SHOW data_directory');
    walDir = join(rows[0].data_directory, 'pg_wal');
    readdirSync(walDir);
  } catch {
    walDir = null;
  }
  return {
    async recordsBetween(from, to) {
      if (waldump === null || walDir === null) return null;
      // Claims and records commit without waiting for their WAL to reach the files: the server's WAL
      // writer writes it within its delay (200 ms by default). A second at most is waited for.
      for (let tries = 0; ; tries++) {
        const { rows } = await admin.query('SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn AS written', [
          to,
        ]);
        if (rows[0].written) break;
        if (tries === 50) return null;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      try {
        const { stdout } = await run(waldump, ['--stats', '-p', walDir, '-s', from, '-e', to], {
          maxBuffer: 1 << 20,
        });
        const total = /^Total\s+(\d+)/m.exec(stdout);
        return total ? Number(total[1]) : null;
      } catch {
        return null; // a file recycled meanwhile, or not readable
      }
    },
  };
}
