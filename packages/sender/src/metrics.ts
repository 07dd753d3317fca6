/**
 * Prometheus metrics (prom-client): events published and the commits that wrote them, attempts and
 * requests given back unsent, deliveries by outcome, attempt duration, queued deliveries by status
 * and disabled endpoints, and the process's own (event-loop delay among them). Each engine has its
 * own registry, so several can live in one process.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Catalogue, DeliveryQueue, StoreStats } from './store/port.js';

export interface SenderMetrics {
  registry: Registry;
  events: Counter<'outcome'>;
  attempts: Counter<'outcome' | 'kind'>;
  unsent: Counter;
  deliveries: Counter<'outcome'>;
  duration: Histogram<'outcome'>;
  breakerTrips: Counter<'kind'>;
}

/** How often the store's counts are read at most: scrapes in a burst share one count. */
export const STATS_MAX_AGE_MS = 5_000;
/** How long a scrape waits for a new count before it answers with the last one. */
export const STATS_WAIT_MS = 100;
/**
 * A count this old is not answered with: the scrape waits for the next, and fails if that fails.
 * Past scrape intervals of a minute or two, so a scraper at those waits 100 ms at most.
 */
export const STATS_STALE_LIMIT_MS = 5 * 60_000;

/**
 * The store's counts, read at most once per STATS_MAX_AGE_MS however often they are scraped, and
 * never twice at once. A count costs what is queued (half a million deliveries: some 60–92 ms), so
 * a scrape waits for one at most STATS_WAIT_MS, then answers with the last while the read goes on
 * for the next scrape; one that fails leaves the last, until that is STATS_STALE_LIMIT_MS old and
 * scrapes fail with the read, as they do before any count (a store down is not hidden).
 */
function cachedStats(store: Pick<Catalogue, 'stats'>, now: () => number): () => Promise<StoreStats> {
  let last: { at: number; stats: StoreStats } | undefined;
  let reading: Promise<StoreStats> | undefined;
  const read = () =>
    (reading ??= store
      .stats()
      .then((stats) => {
        last = { at: now(), stats };
        return stats;
      })
      .finally(() => {
        reading = undefined;
      }));
  return () => {
    if (last && now() - last.at < STATS_MAX_AGE_MS) return Promise.resolve(last.stats);
    const next = read();
    if (!last || now() - last.at >= STATS_STALE_LIMIT_MS) return next;
    const kept = last.stats;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<StoreStats>((resolve) => {
      timer = setTimeout(() => resolve(kept), STATS_WAIT_MS);
      timer.unref();
    });
    return Promise.race([next.catch(() => kept), waited]).finally(() => clearTimeout(timer));
  };
}

/**
 * How often the event-loop gauges of `/metrics` sample (prom-client's default, named): their
 * histogram holds the time between two samples, so an idle service reads about this much.
 */
export const EVENT_LOOP_SAMPLE_MS = 10;

export function createMetrics(
  store: Pick<Catalogue, 'stats'> & Pick<DeliveryQueue, 'publishCommits'>,
  registry = new Registry(),
  now: () => number = () => performance.now(),
): SenderMetrics {
  const stats = cachedStats(store, now);
  collectDefaultMetrics({
    register: registry,
    // prom-client's names start with process_ and nodejs_ already: linkhooks_process_cpu_seconds_total.
    prefix: 'linkhooks_',
    eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS,
  });
  const events = new Counter({
    name: 'linkhooks_events_published_total',
    help: 'Events published through this process, by outcome: stored, or a duplicate (an idempotency key already stored, nothing written).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  new Counter({
    name: 'linkhooks_publish_commits_total',
    help: 'Commits of publishes in this process: publishes that arrive together share one, so events over commits is the size of the groups.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(store.publishCommits());
    },
  });
  const attempts = new Counter({
    name: 'linkhooks_attempts_total',
    help: 'Delivery attempts, by outcome (success or failure) and failure kind.',
    labelNames: ['outcome', 'kind'] as const,
    registers: [registry],
  });
  const unsent = new Counter({
    name: 'linkhooks_requests_unsent_total',
    help: "Requests given back unsent: their deadline passed while every connection to their receiver's server was held by earlier requests.",
    registers: [registry],
  });
  const deliveries = new Counter({
    name: 'linkhooks_deliveries_total',
    help: 'Deliveries that reached a final state, by outcome (delivered or failed).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'linkhooks_attempt_duration_seconds',
    help: 'Time from sending an attempt to its outcome.',
    labelNames: ['outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  new Gauge({
    name: 'linkhooks_queue_depth',
    help: `Deliveries waiting (pending, awaiting_retry, held), by status; counted every ${STATS_MAX_AGE_MS / 1000} s at most.`,
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      for (const [status, n] of Object.entries((await stats()).queued)) this.set({ status }, n);
    },
  });
  new Gauge({
    name: 'linkhooks_disabled_endpoints',
    help: `Endpoints disabled automatically or by hand; counted every ${STATS_MAX_AGE_MS / 1000} s at most.`,
    registers: [registry],
    async collect() {
      this.set((await stats()).disabledEndpoints);
    },
  });
  const breakerTrips = new Counter({
    name: 'linkhooks_breaker_trips_total',
    help: 'Circuit breakers that opened, by kind (endpoint or origin): a first trip, or a failed probe.',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  return { registry, events, attempts, unsent, deliveries, duration, breakerTrips };
}

/**
 * The attempts this process's workers have out, read at each scrape from `read` (the engine's
 * worker, made after the metrics): each worker's own, as its breakers are, so a supervisor sums
 * them across processes; a delivery leased by a process that died is in none of them.
 */
export function countInFlight(metrics: Pick<SenderMetrics, 'registry'>, read: () => number): void {
  new Gauge({
    name: 'linkhooks_attempts_in_flight',
    help: "Attempts this process's workers have out: requests sent and not yet answered, or answered and not yet recorded.",
    registers: [metrics.registry],
    collect() {
      this.set(read());
    },
  });
}
