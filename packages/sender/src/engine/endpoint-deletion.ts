/**
 * Deleting an endpoint (design D78): marked, then its deliveries a bounded step at a time with the
 * event loop free between steps, then the endpoint itself. The DELETE is answered once all are
 * gone, or after ANSWER_WITHIN_MS with the endpoint gone for every route and the rest going on in
 * the background. A deletion cut short (the process stopped, a step that failed) is finished by the
 * next DELETE of the endpoint, or by `finishEndpointDeletions`, which every pruning of the log runs.
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { SenderStore } from '../store/port.js';
import { inSteps } from '../store/prune-steps.js';
import type { StepTurns } from '../store/step-turns.js';
import { DELETE_STEP } from './account-admin.js';
import { ANSWER_WITHIN_MS, answerWithin, stepsUnderWay } from './steps-under-way.js';

/** The deletions cut short one pruning finishes at most: the rest wait for the next. */
const DELETIONS_FINISHED_AT_ONCE = 100;

interface EndpointDeletionOptions {
  store: SenderStore;
  clock: Clock;
  logger: Logger;
  /** The engine's steps, a few at a time across its moves and endpoint deletions (design D83). */
  turns: StepTurns;
  answerWithinMs?: number;
}

export function endpointDeletion({
  store,
  clock,
  logger,
  turns,
  answerWithinMs = ANSWER_WITHIN_MS,
}: EndpointDeletionOptions) {
  const steps = stepsUnderWay();

  /** A marked endpoint's deliveries in steps, then the endpoint; stopping leaves it marked. */
  function removal(accountId: string, id: string): Promise<void> {
    return steps.run(id, async () => {
      await inSteps(
        () => store.deleteEndpointStep(accountId, id, DELETE_STEP),
        1,
        steps.stopped,
        (step) => turns.take(accountId, step),
      );
      if (steps.stopped()) return; // the next prune finishes it
      // False when another process's deletion of it ended first: gone either way.
      await store.deleteEndpoint(accountId, id);
    });
  }

  return {
    /** False when the account has no such endpoint (a deletion under way still has it). */
    async deleteEndpoint(accountId: string, id: string): Promise<boolean> {
      if (!(await store.markEndpointDeleted(accountId, id, clock.now()))) return false;
      await answerWithin(removal(accountId, id), answerWithinMs, (err) =>
        logger.error(
          { err, accountId, endpointId: id },
          'deleting an endpoint stopped; the next prune finishes it',
        ),
      );
      return true;
    },

    /** Finishes deletions cut short; one that fails is logged and left to the next prune. */
    finishEndpointDeletions: (): Promise<number> =>
      steps.finishing(
        () => store.endpointsBeingDeleted(DELETIONS_FINISHED_AT_ONCE),
        ({ accountId, id }) => removal(accountId, id),
        ({ accountId, id }, err) =>
          logger.error(
            { err, accountId, endpointId: id },
            'finishing an endpoint deletion failed; the next prune tries again',
          ),
      ),

    idle: steps.idle,

    /** Deletions under way end after their current step; the next prune finishes them. */
    stop: steps.stop,
  };
}
