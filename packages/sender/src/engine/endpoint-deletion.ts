/**
 * Deleting an endpoint (design D78): marked, then its deliveries a bounded step at a time with the
 * event loop free between steps, then the endpoint itself. The DELETE is answered once all are
 * gone, or after ANSWER_WITHIN_MS with the endpoint gone for every route and the rest going on in
 * the background: a request held for minutes would meet the service's idle timeout, or a proxy's.
 * A deletion cut short (the process stopped, a step that failed) is finished by the next DELETE of
 * the endpoint, or by `finishEndpointDeletions`, which every pruning of the log runs.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { SenderStore } from '../store/port.js';
import { inSteps } from '../store/prune-steps.js';
import { DELETE_STEP } from './account-admin.js';

/** The longest a DELETE waits for the endpoint's deliveries to go before it is answered. */
export const ANSWER_WITHIN_MS = 10_000;
/** The deletions cut short one pruning finishes at most: the rest wait for the next. */
const DELETIONS_FINISHED_AT_ONCE = 100;

interface EndpointDeletionOptions {
  store: SenderStore;
  clock: Clock;
  logger: Logger;
  answerWithinMs?: number;
}

export function endpointDeletion({
  store,
  clock,
  logger,
  answerWithinMs = ANSWER_WITHIN_MS,
}: EndpointDeletionOptions) {
  /** This process's deletions under way, by endpoint id: a second DELETE of one joins it. */
  const running = new Map<string, Promise<void>>();
  let stopping = false;

  /** A marked endpoint's deliveries in steps, then the endpoint; stopping leaves it marked. */
  async function removeMarked(accountId: string, id: string): Promise<void> {
    await inSteps(
      () => store.deleteEndpointStep(accountId, id, DELETE_STEP),
      1,
      () => stopping,
    );
    if (stopping) return; // the next prune finishes it
    // False when another process's deletion of it ended first: gone either way.
    await store.deleteEndpoint(accountId, id);
  }

  /** Resolves once no deletion of this process is under way. */
  async function idle(): Promise<void> {
    while (running.size > 0) await Promise.allSettled([...running.values()]);
  }

  function removal(accountId: string, id: string): Promise<void> {
    const under = running.get(id);
    if (under) return under;
    const started = removeMarked(accountId, id).finally(() => running.delete(id));
    running.set(id, started);
    return started;
  }

  return {
    /** False when the account has no such endpoint (a deletion under way still has it). */
    async deleteEndpoint(accountId: string, id: string): Promise<boolean> {
      if (!(await store.markEndpointDeleted(accountId, id, clock.now()))) return false;
      let answered = false;
      const removing = removal(accountId, id).catch((err: unknown) => {
        if (!answered) throw err;
        logger.error(
          { err, accountId, endpointId: id },
          'deleting an endpoint stopped; the next prune finishes it',
        );
      });
      const timer = new AbortController();
      try {
        await Promise.race([
          removing,
          delay(answerWithinMs, undefined, { signal: timer.signal, ref: false }),
        ]);
      } finally {
        answered = true;
        timer.abort();
      }
      return true;
    },

    /** Finishes deletions cut short; one that fails is logged and left to the next prune. */
    async finishEndpointDeletions(): Promise<number> {
      let finished = 0;
      for (const { accountId, id } of await store.endpointsBeingDeleted(DELETIONS_FINISHED_AT_ONCE)) {
        if (stopping) break;
        try {
          await removal(accountId, id);
          finished++;
        } catch (err) {
          logger.error(
            { err, accountId, endpointId: id },
            'finishing an endpoint deletion failed; the next prune tries again',
          );
        }
      }
      return finished;
    },

    idle,

    /** Deletions under way end after their current step; the next prune finishes them. */
    async stop(): Promise<void> {
      stopping = true;
      await idle();
      stopping = false;
    },
  };
}
