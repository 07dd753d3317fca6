// graphile-worker 0.17: `run()` with a task list in this process, jobs added in batches through
// WorkerUtils.addJobs, the batching options its performance guide recommends.
import { Logger, makeWorkerUtils, run } from 'graphile-worker';
import { closeSteps, dropSchema, resourceName } from './common.mjs';

const TASK = 'deliver_webhook';

// Warnings and errors only, first lines, the first few: a broken receiver fails every job, and
// the round reports the first failure anyway.
function quietLogger(shown = 3) {
  let logged = 0;
  return new Logger(() => (level, message) => {
    if (level !== 'error' && level !== 'warning') return;
    logged++;
    if (logged <= shown) console.error(`graphile-worker ${level}: ${message.split('\n')[0]}`);
    else if (logged === shown + 1) console.error('graphile-worker: further warnings and errors not shown');
  });
}

export async function startGraphileWorker({ handle, concurrency, pgUrl }) {
  const schema = resourceName('gw');
  const preset = {
    worker: {
      connectionString: pgUrl,
      schema,
      concurrentJobs: concurrency,
      // The documented sizing: 10 or concurrentJobs + 2, whichever is larger.
      maxPoolSize: Math.max(10, concurrency + 2),
      logger: quietLogger(),
      // The batching of the performance guide's configuration: jobs fetched 500 at a time into a
      // local queue, completions and failures written in batches.
      localQueue: { size: 500 },
      completeJobBatchDelay: 0,
      failJobBatchDelay: 0,
    },
  };
  let runner;
  let utils;
  const close = () =>
    closeSteps('graphile-worker', [
      ['stop the runner', () => runner?.stop()],
      ['release the utils', () => utils?.release()],
      ['drop the schema', () => dropSchema(pgUrl, schema), 20_000],
    ]);
  try {
    runner = await run({
      preset,
      noHandleSignals: true, // the bench's own handlers clean up on Ctrl-C
      parsedCronItems: [], // no crontab file to look for
      taskList: {
        // The default 25 attempts with exponential back-off are the retry policy.
        [TASK]: (payload, helpers) => handle(payload, helpers.job.attempts),
      },
    });
    utils = await makeWorkerUtils({ preset });
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
  return {
    schema,
    enqueue: (payloads) => utils.addJobs(payloads.map((payload) => ({ identifier: TASK, payload }))),
    close,
  };
}
