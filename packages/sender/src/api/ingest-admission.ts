/**
 * How much ingest the service holds at once. A request's body is read, parsed and kept until its
 * events are stored: a platform retrying a backlog with hundreds of full batches at once would
 * hold gigabytes and take the process, and every account's deliveries with it. Past the budget an
 * ingest request is answered `503 overloaded` with `Retry-After` before its body is read.
 */
import { getHeapStatistics } from 'node:v8';
import { SenderError } from '../errors.js';

/**
 * The default budget of request bytes in flight: 256 MiB (32 batches at their largest), or a
 * sixteenth of the heap where the heap is smaller. Parsed, a body takes several times its bytes.
 */
export function defaultIngestBytesInFlight(): number {
  return Math.min(256 * 1024 * 1024, Math.floor(getHeapStatistics().heap_size_limit / 16));
}

/** When a request refused for the budget may be sent again: the requests ahead take about that. */
const RETRY_AFTER_SECONDS = 1;

export interface IngestAdmission {
  /**
   * Takes `bytes` of the budget, or throws `overloaded` when they do not fit beside what is in
   * flight. A request alone is always taken, whatever its size: the route's own limit bounds it.
   * Answers the release, to call once the request is answered.
   */
  take(bytes: number): () => void;
}

/**
 * @example
 * const admission = createIngestAdmission(defaultIngestBytesInFlight());
 * const release = admission.take(Number(req.headers['content-length']));
 * res.once('close', release);
 */
export function createIngestAdmission(budget: number): IngestAdmission {
  let inFlight = 0;
  return {
    take(bytes) {
      if (inFlight > 0 && inFlight + bytes > budget) {
        throw new SenderError(
          'overloaded',
          'the service is taking in as many events as it can hold right now; send this again after Retry-After',
          { retryAfterSeconds: RETRY_AFTER_SECONDS },
        );
      }
      inFlight += bytes;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        inFlight -= bytes;
      };
    },
  };
}
