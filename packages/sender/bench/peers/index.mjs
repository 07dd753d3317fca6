// Job-queue peers of the sender benchmark: the same webhook deliveries the engine makes, run as one
// job per delivery on graphile-worker, pg-boss and BullMQ, so bench/run.mjs can put the engine's
// throughput beside theirs in the same run. See README.md.
import { HarnessError, withTimeout } from '../harness.mjs';
import { createDeliverer, createRounds } from './common.mjs';

export const PEERS = ['graphile-worker', 'pg-boss', 'bullmq'];

// The library modules load on demand, so one missing package does not take the others down.
const START = {
  'graphile-worker': async (o) => (await import('./graphile-worker.mjs')).startGraphileWorker(o),
  'pg-boss': async (o) => (await import('./pg-boss.mjs')).startPgBoss(o),
  bullmq: async (o) => (await import('./bullmq.mjs')).startBullMQ(o),
};

const ROUND_TIMEOUT_MS = 60_000;

/**
 * Sets up one peer (its own PostgreSQL schema or Redis key prefix, created fresh and removed by `close`).
 * `targets`: [{ url, secret }] — the receiver endpoints (HTTPS on loopback, certificate signed by `ca`).
 * Returns { name, runRound(events, { batch } | { producers }), close() }: `events` is an array of
 * Buffers (the exact request bodies, one per event); each event fans out to every target, one job
 * per delivery, enqueued `batch` jobs a call, one call after another (the workers start on the
 * first slice while the next is written), or one event's jobs a call from `producers` concurrent
 * producers. runRound
 * resolves with { deliveries, ms } once the receiver has answered every delivery 2xx, `ms` timed
 * from the start of enqueueing to the last 2xx; it rejects (HarnessError) when an attempt fails or
 * the round takes over 60 s.
 */
export async function createPeer(name, { targets, ca, concurrency = 64, pgUrl, redisUrl }) {
  const start = START[name];
  if (!start) throw new Error(`unknown peer "${name}": choose from ${PEERS.join(', ')}`);
  const deliverer = createDeliverer({ targets, ca });
  const rounds = createRounds();
  // The job handler: a failed attempt is reported to the round and rethrown for the queue to retry.
  const handle = async (job, attempt) => {
    try {
      await deliverer.deliver(job, attempt);
    } catch (error) {
      rounds.failed(job, error);
      throw error;
    }
    rounds.delivered(job);
  };
  let queue;
  try {
    queue = await start({ handle, concurrency, pgUrl, redisUrl });
  } catch (error) {
    await deliverer.close();
    throw error;
  }
  let closing;
  return {
    name,
    async runRound(events, { batch, producers } = {}) {
      if (!(batch > 0) === !(producers > 0)) {
        throw new HarnessError(
          `${name}: a round enqueues either { batch } or { producers }, a count above 0`,
        );
      }
      const fanout = targets.length;
      const deliveries = events.length * fanout;
      // A peer whose workers poll runs them in its own rounds only (pg-boss.mjs).
      await queue.resume?.();
      try {
        const round = rounds.begin(deliveries);
        const started = performance.now();
        const bodies = events.map((body) => body.toString('base64'));
        const payloads = (from, to) => {
          const jobs = [];
          for (let index = from; index < to; index++) {
            const e = Math.floor(index / fanout);
            const endpoint = index % fanout;
            jobs.push({
              round: round.id,
              index,
              event: `evt_${round.id}_${e}`,
              delivery: `dlv_${round.id}_${e}_${endpoint}`,
              endpoint,
              body: bodies[e],
            });
          }
          return jobs;
        };
        if (producers) {
          // Each click's jobs in a call of their own as it arrives, `producers` clicks at a time: what
          // a platform's servers enqueue as clicks come in, as the service's ingest clients post them.
          let next = 0;
          const producer = async () => {
            for (let e = next++; e < events.length; e = next++) {
              await queue.enqueue(payloads(e * fanout, (e + 1) * fanout));
            }
          };
          await Promise.all(Array.from({ length: producers }, producer));
        } else {
          for (let from = 0; from < deliveries; from += batch) {
            await queue.enqueue(payloads(from, Math.min(from + batch, deliveries)));
          }
        }
        const finished = await withTimeout(round.done, ROUND_TIMEOUT_MS, `a ${name} round`);
        return { deliveries, ms: finished - started };
      } finally {
        await queue.pause?.(); // a failed round's workers too
      }
    },
    close() {
      closing ??= queue.close().finally(() => deliverer.close());
      return closing;
    },
  };
}
