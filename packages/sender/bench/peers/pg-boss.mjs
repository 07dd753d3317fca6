// pg-boss 10: a queue made with createQueue, jobs added in batches with insert(), and polling workers
// from work(). v10 has no teamSize: concurrency is the handler's, over the batch a worker fetches
// (several work() calls so one slow batch does not stall everything), and a job that fails inside
// a batch is failed on its own with fail(), as the maintainer advises, so its batch-mates complete.
import PgBoss from 'pg-boss';
import { closeSteps, dropSchema, resourceName } from './common.mjs';

const QUEUE = 'deliver-webhook';
// A v10 worker waits out what is left of its polling interval after each batch, even a full one,
// and fetches again only when its whole batch is settled, so one worker moves at most batchSize
// jobs per interval. With the shortest interval pg-boss accepts, 2 workers × 2,000 keep that
// ceiling far above what 64 lanes deliver; on this workload fewer, larger batches measured faster
// (2 × 2,000 about 5,700/s, 4 × 1,000 about 4,900/s, 8 × 500 about 4,100/s).
const WORKERS = 2;
const BATCH_SIZE = 2_000;
const POLLING_SECONDS = 0.5;

/** Runs `fn` over `items` with at most `lanes` in flight. */
async function inLanes(items, lanes, fn) {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(lanes, items.length) }, lane));
}

export async function startPgBoss({ handle, concurrency, pgUrl }) {
  const schema = resourceName('pgboss');
  // schedule: false: no cron jobs here, so no clock and cron monitoring either.
  const boss = new PgBoss({ connectionString: pgUrl, schema, schedule: false });
  boss.on('error', (error) => console.error(`pg-boss error: ${error.message}`));
  const workerIds = [];
  let started = false;
  const close = () =>
    closeSteps('pg-boss', [
      ['stop', () => started && boss.stop({ graceful: true, wait: true, timeout: 5_000 })],
      ['drop the schema', () => dropSchema(pgUrl, schema), 20_000],
    ]);
  // The workers poll only during the peer's own rounds: left polling between them, two workers
  // over a job table that grows by 10,000 finished jobs a round cost the database server a share of a
  // core that grew with every round (18% of one after 7 rounds of each way here, with autovacuum
  // off), taken from whatever sender's round ran meanwhile and counted as its database's.
  const startWorkers = async () => {
    const workers = Math.min(WORKERS, concurrency);
    for (let w = 0; w < workers; w++) {
      // The lanes split over the workers: 32 each by default.
      const lanes = Math.floor(concurrency / workers) + (w < concurrency % workers ? 1 : 0);
      const id = await boss.work(
        QUEUE,
        { batchSize: BATCH_SIZE, pollingIntervalSeconds: POLLING_SECONDS, includeMetadata: true },
        (jobs) =>
          inLanes(jobs, lanes, async (job) => {
            try {
              await handle(job.data, job.retryCount + 1);
            } catch (error) {
              await boss.fail(QUEUE, job.id, { message: error.message });
            }
          }),
      );
      workerIds.push(id);
    }
  };
  try {
    await boss.start();
    started = true;
    await boss.createQueue(QUEUE, { retryLimit: 8, retryDelay: 2, retryBackoff: true });
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
  return {
    schema,
    async resume() {
      if (workerIds.length === 0) await startWorkers();
    },
    async pause() {
      workerIds.length = 0;
      await boss.offWork(QUEUE); // each worker stops after its current poll
    },
    async enqueue(payloads) {
      await boss.insert(payloads.map((data) => ({ name: QUEUE, data })));
      // The producer shares the process: wake the workers instead of leaving the jobs to the next poll.
      for (const id of workerIds) boss.notifyWorker(id);
    },
    close,
  };
}
