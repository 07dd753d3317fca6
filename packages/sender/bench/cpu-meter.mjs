// What a delivery round costs in CPU, by part: this process (the bare loop; a peer's producer and
// worker; the service's ingest clients), the receiver, and the database server running on this
// machine (PostgreSQL's or Redis's processes, read from /proc). Used by bench/service.mjs, so a
// gap in deliveries per second can be traced to the part that spends the time.
import { readdirSync, readFileSync } from 'node:fs';

/** The servers measured, by the label a round names its server with: their processes' names (`comm`). */
export const SERVERS = { PostgreSQL: 'postgres', Redis: 'redis-server' };

/**
 * Of the process or thread whose `/proc` folder is `dir`, so far, in µs: `cpuUs`, its time on a CPU,
 * and `waitUs`, its time runnable yet waiting for one, the first two fields of its `schedstat` (ns;
 * `stat`'s clock ticks are 10 ms, too coarse for a round of a second). Throws where it cannot be read.
 */
function schedstat(dir) {
  const [cpuNs, waitNs] = readFileSync(`${dir}/schedstat`, 'utf8').split(' ').map(Number);
  return { cpuUs: cpuNs / 1000, waitUs: waitNs / 1000 };
}

/**
 * CPU time so far of every process named `comm`, by pid, in µs; null where /proc cannot be read.
 * A server on another machine has no process here: the map is empty.
 */
function processTimes(comm) {
  let pids;
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  const times = new Map();
  for (const pid of pids) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === comm)
        times.set(pid, schedstat(`/proc/${pid}`).cpuUs);
    } catch {
      // exited meanwhile
    }
  }
  return times;
}

/**
 * Starts measuring; the function it resolves with stops and resolves with the CPU spent meanwhile,
 * in µs: `ownUs` (this process), `receiverUs`, and `serverUs` for `server` (a label of SERVERS, or
 * null for none): NaN where its processes cannot be read or none runs on this machine. A server
 * process that started meanwhile (a new connection's backend) counts whole; one that ended
 * meanwhile (an autovacuum worker) is missed, so a server's figure can only be low.
 */
export async function startCpuMeter(receiver, server) {
  const comm = server ? SERVERS[server] : null;
  const before = comm ? processTimes(comm) : null;
  const receiverBefore = (await receiver.stats()).cpuUs;
  const own = process.cpuUsage();
  return async () => {
    const ownSince = process.cpuUsage(own);
    const receiverAfter = (await receiver.stats()).cpuUs;
    const after = comm ? processTimes(comm) : null;
    let serverUs = Number.NaN;
    if (before && after && after.size > 0) {
      serverUs = 0;
      for (const [pid, us] of after) serverUs += us - (before.get(pid) ?? 0);
    }
    return { ownUs: ownSince.user + ownSince.system, receiverUs: receiverAfter - receiverBefore, serverUs };
  };
}

/**
 * schedstat() of the main thread (the event loop) of process `pid`; NaN where it cannot be read. A
 * service whose other threads take work off its event loop shows it in `cpuUs`, where its
 * process's CPU would not. On a machine whose cores are all busy, a timer that fell due may wait
 * for a core too (`waitUs`), so part of the loop's delay comes from sharing the cores, with other
 * processes or the service's own threads, rather than from how long its code holds the loop.
 */
export function mainThreadTimes(pid) {
  try {
    return schedstat(`/proc/${pid}/task/${pid}`);
  } catch {
    return { cpuUs: Number.NaN, waitUs: Number.NaN };
  }
}
