// What a delivery round costs in CPU, by part: this process (the bare loop; a peer's producer and
// worker; the service's ingest clients), the receiver, and the database servers running on this
// machine (PostgreSQL's and Redis's processes, read from /proc). Used by bench/service.mjs, so a
// gap in deliveries per second can be traced to the part that spends the time.
import { readdirSync, readFileSync } from 'node:fs';

/** Process names (`/proc/<pid>/comm`) of the servers measured, and the label each is shown under. */
export const SERVERS = { postgres: 'PostgreSQL', 'redis-server': 'Redis' };

/**
 * Time on the CPU of every process of the SERVERS, by pid, in ns (the first field of
 * `/proc/<pid>/schedstat`: `stat`'s clock ticks are 10 ms, too coarse for a round of a second);
 * null where /proc cannot be read. A server on another machine has no process here and reads 0.
 */
function serverTimes() {
  let entries;
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  const times = new Map();
  for (const pid of entries) {
    try {
      const name = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      if (!Object.hasOwn(SERVERS, name)) continue;
      times.set(pid, { name, ns: Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) });
    } catch {
      // exited meanwhile
    }
  }
  return times;
}

/**
 * Starts measuring; the function it resolves with stops and resolves with the CPU spent meanwhile,
 * in µs: `ownUs` (this process), `receiverUs`, and `servers` by label (SERVERS; empty without
 * /proc). A server process that started meanwhile (a new connection's backend) counts whole; one
 * that ended meanwhile (an autovacuum worker) is missed, so a server's figure can only be low.
 */
export async function startCpuMeter(receiver) {
  const servers = serverTimes();
  const receiverBefore = (await receiver.stats()).cpuUs;
  const own = process.cpuUsage();
  return async () => {
    const ownSince = process.cpuUsage(own);
    const receiverAfter = (await receiver.stats()).cpuUs;
    const after = serverTimes();
    const byServer = {};
    if (servers && after) {
      for (const [pid, { name, ns }] of after) {
        const label = SERVERS[name];
        byServer[label] = (byServer[label] ?? 0) + (ns - (servers.get(pid)?.ns ?? 0)) / 1000;
      }
    }
    return {
      ownUs: ownSince.user + ownSince.system,
      receiverUs: receiverAfter - receiverBefore,
      servers: byServer,
    };
  };
}

/**
 * CPU time so far of the main thread (the event loop) of process `pid`, in µs, from
 * `/proc/<pid>/task/<pid>/schedstat`; NaN where it cannot be read. A service whose other threads
 * take work off its event loop shows it here, where its process's CPU would not.
 */
export function mainThreadCpuUs(pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1000;
  } catch {
    return Number.NaN;
  }
}
