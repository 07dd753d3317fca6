/**
 * How much ingest the service holds at once (design D65). A request's body is read, parsed and
 * kept until its events are stored: a platform retrying a backlog with hundreds of full batches at
 * once would hold gigabytes and take the process, and every account's deliveries with it. Past the
 * budget an ingest request is answered `503 overloaded` with `Retry-After` before its body is read.
 * A request holds its share until its work is over, not only until its client goes: a client that
 * gives up mid-request leaves its events being stored, in memory, all the same.
 */
import { getHeapStatistics } from 'node:v8';
import { Counter, type Registry } from 'prom-client';
import { SenderError } from '../errors.js';

/**
 * The default budget of request bytes in flight: 256 MiB (32 batches at their largest), or a
 * sixteenth of the heap's limit where the heap is smaller. Parsed, a body takes several times its
 * bytes.
 */
export function defaultIngestBytesInFlight(heapLimit = getHeapStatistics().heap_size_limit): number {
  return Math.min(256 * 1024 * 1024, Math.floor(heapLimit / 16));
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
 * try { await handle(req) } finally { release() }
 */
export function createIngestAdmission(
  budget: number,
  refused: () => void = () => undefined,
): IngestAdmission {
  let inFlight = 0;
  return {
    take(bytes) {
      if (inFlight > 0 && inFlight + bytes > budget) {
        refused();
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

const OVERLOADED_METRIC = 'linkhooks_ingest_overloaded_total';

/** Counts the refusals in the engine's registry (`/metrics`), one counter however many routers share it. */
export function overloadedCounter(registry: Registry): () => void {
  const counter =
    (registry.getSingleMetric(OVERLOADED_METRIC) as Counter | undefined) ??
    new Counter({
      name: OVERLOADED_METRIC,
      help: 'Ingest requests answered 503 overloaded: more ingest in flight than the service holds at once.',
      registers: [registry],
    });
  return () => counter.inc();
}
