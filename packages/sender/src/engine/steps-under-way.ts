/**
 * Work that goes in bounded steps per endpoint (its deletion, the moving of its deliveries), and
 * how long a request waits for it. A second request for an endpoint joins the work under way;
 * stopping lets each end after its current step, and the store's list of work under way has the
 * rest finished later.
 */
import { setTimeout as delay } from 'node:timers/promises';

/** The key of a finishing pass among the work under way (no endpoint id is empty). */
const FINISHING = '';

/** The longest a request waits for an endpoint's steps before it is answered. */
export const ANSWER_WITHIN_MS = 10_000;

export function stepsUnderWay() {
  /** This process's work under way, by endpoint id. */
  const running = new Map<string, Promise<void>>();
  let stopping = false;

  function run(id: string, work: () => Promise<void>): Promise<void> {
    const under = running.get(id);
    if (under) return under;
    const started = work().finally(() => running.delete(id));
    running.set(id, started);
    return started;
  }

  async function idle(): Promise<void> {
    while (running.size > 0) await Promise.allSettled([...running.values()]);
  }

  return {
    /** True while stopping: each step loop ends before its next step. */
    stopped: () => stopping,

    /** Starts `work` for `id`, or joins the work under way for it. */
    run,

    /**
     * A pass finishing work cut short: `each` of what `listed` reads, one after another until
     * stopping, a failure passed to `failed` and the pass going on. Under way itself from its
     * start, so that a stop waits for it (its first read included); a second pass joins it.
     * Answers how many it finished.
     */
    async finishing<T>(
      listed: () => Promise<T[]>,
      each: (item: T) => Promise<void>,
      failed: (item: T, err: unknown) => void,
    ): Promise<number> {
      let finished = 0;
      await run(FINISHING, async () => {
        for (const item of await listed()) {
          if (stopping) break;
          try {
            await each(item);
            finished++;
          } catch (err) {
            failed(item, err);
          }
        }
      });
      return finished;
    },

    /** Resolves once no work of this process is under way. */
    idle,

    async stop(): Promise<void> {
      stopping = true;
      await idle();
      stopping = false;
    },
  };
}

/**
 * Waits for `work` at most `ms`: a request held for minutes would meet the service's idle timeout,
 * or a proxy's, so past that it is answered with the rest going on. A failure before the answer
 * fails the request; one after it goes to `lateFailure`.
 */
export async function answerWithin(
  work: Promise<void>,
  ms: number,
  lateFailure: (err: unknown) => void,
): Promise<void> {
  let answered = false;
  const watched = work.catch((err: unknown) => {
    if (!answered) throw err;
    lateFailure(err);
  });
  const timer = new AbortController();
  try {
    await Promise.race([watched, delay(ms, undefined, { signal: timer.signal, ref: false })]);
  } finally {
    answered = true;
    timer.abort();
  }
}
