// How many WAL records a PostgreSQL server wrote between two of its WAL positions, counted by
// pg_waldump in the server's own WAL files. pg_stat_wal's `wal_records` cannot say it for a round
// of a second: each backend adds its count to it about once a second while busy and ten seconds
// after it goes idle, so a round's records were counted in later rounds, or none (a round's median
// read 9 records per delivery where pg_waldump counted 27, and 0 for a peer). Used by bench/run.mjs
// (recordsBetween) and bench/store-cycle.mjs (recordsByRelation).
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** How long a round's WAL may take to reach the files: the WAL writer's worst case is 3 × 200 ms. */
const WRITTEN_WITHIN_MS = 1_000;
const POLL_MS = 20;

/**
 * `recordsBetween(from, to)`: the records the server `admin` (a connected pg.Client of a superuser,
 * who may read its data directory) wrote between two of its WAL positions (`pg_lsn` text); null
 * where they cannot be counted here: the server runs on another machine or as a user whose files
 * this one cannot read, there is no pg_waldump beside its executable, the WAL up to `to` is not in
 * its files within WRITTEN_WITHIN_MS, or pg_waldump fails (a file recycled meanwhile). Everything
 * the server wrote counts, autovacuum's and other clients' too.
 */
export async function walRecordCounter(admin) {
  let waldump = null;
  let walDir = null;
  try {
    // The executable of this connection's own backend: the server's, whatever else runs here (a
    // server elsewhere or in a container of its own has another process at that id, or none).
    const { rows } = await admin.query('SELECT pg_backend_pid() AS pid, current_setting($1) AS dir', [
      'data_directory',
    ]);
    const executable = readlinkSync(`/proc/${rows[0].pid}/exe`);
    const candidate = join(dirname(executable), 'pg_waldump');
    walDir = join(rows[0].dir, 'pg_wal');
    readdirSync(walDir);
    if (basename(executable) === 'postgres' && existsSync(candidate)) waldump = candidate;
  } catch {
    // another machine's server, another user's files, or no data directory shown: none counted
  }
  /**
   * The name of the WAL file that holds `to` once the server has written its WAL up to there, or
   * null after WRITTEN_WITHIN_MS: claims and records commit without waiting for their WAL to reach
   * the files, and the server's WAL writer writes it within three of its delays.
   */
  async function writtenFile(to) {
    for (let waited = 0; waited <= WRITTEN_WITHIN_MS; waited += POLL_MS) {
      const { rows } = await admin.query(
        'SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn AS written, pg_walfile_name($1::pg_lsn) AS file',
        [to],
      );
      if (rows[0].written) return rows[0].file;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    return null;
  }
  /** pg_waldump's arguments for the WAL between `from` and `to` once written, or null (see recordsBetween). */
  async function dumpArgs(from, to) {
    const file = waldump === null ? null : await writtenFile(to);
    if (file === null) return null;
    // The timeline is the first eight hex digits of the file's name (pg_waldump assumes 1).
    const timeline = String(Number.parseInt(file.slice(0, 8), 16));
    return ['-p', walDir, '-t', timeline, '-s', from, '-e', to];
  }
  return {
    /**
     * The records between two WAL positions that touch a relation's block, by kind and by the
     * relation of their first block (`Heap/LOCK 16423`: the relation's file node,
     * pg_relation_filenode), or null as recordsBetween. Records of no block (a commit, a
     * snapshot of running transactions) are not in it, so it sums to a little less than
     * recordsBetween's total.
     */
    async recordsByRelation(from, to) {
      const args = await dumpArgs(from, to);
      if (args === null) return null;
      try {
        const { stdout } = await run(waldump, args, { maxBuffer: 1 << 30 });
        const counts = new Map();
        for (const line of stdout.split('\n')) {
          const m = /^rmgr: (\w+)\s.*?desc: (\w+).*?blkref #0: rel \d+\/\d+\/(\d+)/.exec(line);
          if (!m) continue;
          const key = `${m[1]}/${m[2]} ${m[3]}`;
          counts.set(key, (counts.get(key) ?? 0) + 1);
        }
        return counts;
      } catch {
        return null; // a file recycled meanwhile, or not readable
      }
    },
    async recordsBetween(from, to) {
      const args = await dumpArgs(from, to);
      if (args === null) return null;
      try {
        const { stdout } = await run(waldump, ['--stats', ...args], { maxBuffer: 1 << 20 });
        const total = /^Total\s+(\d+)/m.exec(stdout);
        return total ? Number(total[1]) : null;
      } catch {
        return null; // a file recycled meanwhile, or not readable
      }
    },
  };
}
