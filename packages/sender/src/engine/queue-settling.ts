/**
 * Moving an endpoint's deliveries toward its flags (design D34): a pause, a resume, a re-enabling
 * or an automatic disabling moves the first step of them with the change, and the rest go here a
 * bounded step at a time, the event loop free between steps. A resume or a re-enabling is answered
 * once all are moved, or after ANSWER_WITHIN_MS with the rest going on; a disabling, made by an
 * attempt's record, waits for nothing. Moves cut short (the process stopped, a step that failed)
 * are finished at the next start or pruning, from the store's list of them.
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { addMoved, NOTHING_MOVED, type QueueMoved } from '../domain/queue-moves.js';
import type { EndpointRef, SenderStore } from '../store/port.js';
import { inSteps, PRUNE_STEP } from '../store/prune-steps.js';
import type { StepTurns } from '../store/step-turns.js';
import { ANSWER_WITHIN_MS, answerWithin, stepsUnderWay } from './steps-under-way.js';

/** The endpoints one start or pruning finishes at most: the rest wait for the next. */
const FINISHED_AT_ONCE = 100;

interface QueueSettlingOptions {
  store: SenderStore;
  clock: Clock;
  logger: Logger;
  /** Wakes the workers: a step made deliveries claimable. */
  wake: () => void;
  /** The engine's steps, a few at a time across its moves and endpoint deletions (design D83). */
  turns: StepTurns;
  answerWithinMs?: number;
}

export function queueSettling({
  store,
  clock,
  logger,
  wake,
  turns,
  answerWithinMs = ANSWER_WITHIN_MS,
}: QueueSettlingOptions) {
  const steps = stepsUnderWay();
  /** What each run under way has moved so far, by endpoint id. */
  const totals = new Map<string, QueueMoved>();
  const failed =
    ({ accountId, id }: EndpointRef) =>
    (err: unknown) =>
      logger.error(
        { err, accountId, endpointId: id },
        "moving an endpoint's deliveries stopped; the next prune finishes it",
      );

  /** The endpoint's steps until none is left, in its account's turns, or joins those under way. */
  function settle({ accountId, id }: EndpointRef): { run: Promise<void>; moved: QueueMoved } {
    const run = steps.run(id, async () => {
      const moved = { ...NOTHING_MOVED };
      totals.set(id, moved);
      try {
        await inSteps(
          async () => {
            const step = await store.settleQueueStep(id, PRUNE_STEP, clock.now());
            addMoved(moved, step);
            if (step.released + step.replayed > 0) wake();
            return step.done ? 0 : 1;
          },
          1,
          steps.stopped,
          (step) => turns.take(accountId, step),
        );
      } finally {
        totals.delete(id);
      }
    });
    return { run, moved: totals.get(id) ?? { ...NOTHING_MOVED } };
  }

  return {
    /**
     * With the store's first step `first`: the rest when it left some (`settling`), waited for at
     * most ANSWER_WITHIN_MS; answers what this change moved by then. A step that fails before the
     * answer fails it (the change itself is made; the next start or prune finishes the moves).
     */
    async answered(endpoint: EndpointRef, first: QueueMoved & { settling: boolean }): Promise<QueueMoved> {
      if (!first.settling) return first;
      const { run, moved } = settle(endpoint);
      const before = { ...moved };
      await answerWithin(run, answerWithinMs, failed(endpoint));
      return {
        held: first.held + moved.held - before.held,
        released: first.released + moved.released - before.released,
        replayed: first.replayed + moved.replayed - before.replayed,
      };
    },

    /** A change that waits for nothing (a disabling): its steps go on in the background. */
    inBackground(endpoint: EndpointRef): void {
      settle(endpoint).run.catch(failed(endpoint));
    },

    /** Finishes the moves cut short; one that fails is logged and left to the next prune. */
    finish: (): Promise<number> =>
      steps.finishing(
        () => store.endpointsSettling(FINISHED_AT_ONCE),
        (endpoint) => settle(endpoint).run,
        (endpoint, err) => failed(endpoint)(err),
      ),

    idle: steps.idle,

    /** Moves under way end after their current step; the next start or prune finishes them. */
    stop: steps.stop,
  };
}
export type QueueSettling = ReturnType<typeof queueSettling>;
