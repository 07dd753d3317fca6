// BullMQ 6 on Redis: a Queue fed with addBulk, one Worker in this process with concurrency 64, both
// on one ioredis connection (the Worker duplicates it for its blocking reads). This machine's Redis
// keeps nothing on disk, so an add is acknowledged from memory alone.
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { closeSteps, resourceName } from './common.mjs';

const QUEUE = 'deliver-webhook';
const JOB = 'deliver';

export async function startBullMQ({ handle, concurrency, redisUrl }) {
  const prefix = resourceName('bullmq');
  // maxRetriesPerRequest: null, as BullMQ requires of a connection its Workers use.
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
  let queue;
  let worker;
  const close = () =>
    closeSteps('bullmq', [
      ['close the worker', () => worker?.close()],
      ['obliterate the queue', () => queue?.obliterate({ force: true })],
      ['remove the remaining keys', () => removeKeys(connection, prefix)],
      ['close the queue', () => queue?.close()],
      ['quit', () => connection.quit()],
    ]).finally(() => connection.disconnect());
  try {
    await connection.connect();
    queue = new Queue(QUEUE, {
      connection,
      prefix,
      defaultJobOptions: {
        attempts: 8,
        backoff: { type: 'exponential', delay: 2_000 },
        // Auto-removal, as the production guide advises, since Redis holds every job in memory:
        // a completed job is dropped at once (keeping the last 1,000 measured about 20% slower),
        // failed ones are kept, bounded, for inspection.
        removeOnComplete: true,
        removeOnFail: { count: 5_000 },
      },
    });
    queue.on('error', (error) => console.error(`bullmq queue error: ${error.message}`));
    worker = new Worker(QUEUE, (job) => handle(job.data, job.attemptsMade + 1), {
      connection,
      prefix,
      concurrency,
    });
    worker.on('error', (error) => console.error(`bullmq worker error: ${error.message}`));
    await worker.waitUntilReady();
    await queue.waitUntilReady();
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
  return {
    prefix,
    enqueue: (payloads) => queue.addBulk(payloads.map((data) => ({ name: JOB, data }))),
    close,
  };
}

/** Whatever obliterate leaves under the prefix (the queue's meta and event stream keys). */
async function removeKeys(redis, prefix) {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1_000);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}
