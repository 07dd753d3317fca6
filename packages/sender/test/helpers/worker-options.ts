/**
 * A worker's options for tests: `slots` of each kind (concurrency, caps, batch), the default rules,
 * a minute's poll, records held through their slot; what a test names replaces the rest.
 */
import { DEFAULT_DISABLE_POLICY } from '../../src/domain/disable-rule.js';
import { DEFAULT_SCHEDULE } from '../../src/domain/schedule.js';
import type { AttemptMade, AttemptReport } from '../../src/worker/attempt.js';
import type { WorkerOptions } from '../../src/worker/worker.js';

type Given = Pick<WorkerOptions, 'queue' | 'client' | 'clock'> & Partial<WorkerOptions>;

export function workerOptions<G extends Given>(slots: number, given: G): WorkerOptions & G {
  return {
    rules: { schedule: DEFAULT_SCHEDULE, policy: DEFAULT_DISABLE_POLICY },
    userAgent: 'linkhooks-test',
    concurrency: slots,
    perEndpointCap: slots,
    perAccountCap: slots,
    perOriginCap: slots,
    perAccountAtOriginCap: slots,
    batchSize: slots,
    leaseMs: 60_000,
    renewEveryMs: 20_000,
    pollIntervalMs: 60_000,
    freeSlotOnResponse: false,
    onAttempt: () => undefined,
    onError: (error) => {
      throw error;
    },
    ...given,
  };
}

/** The attempt `report` holds; fails the test when its request was given back unsent instead. */
export function made(report: AttemptReport): AttemptMade {
  if (report.unsent)
    throw new Error(`delivery ${report.claim.delivery.id} was given back unsent, not attempted`);
  return report;
}
