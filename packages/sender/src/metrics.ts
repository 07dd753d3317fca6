/**
 * Prometheus metrics (prom-client): deliveries by outcome, attempt duration, queue depth by status
 * and disabled endpoints. Each engine has its own registry, so several can live in one process.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Catalogue } from './store/port.js';

export interface SenderMetrics {
  registry: Registry;
  attempts: Counter<'outcome' | 'kind'>;
  deliveries: Counter<'outcome'>;
  duration: Histogram<'outcome'>;
}

export function createMetrics(store: Pick<Catalogue, 'stats'>, registry = new Registry()): SenderMetrics {
  const attempts = new Counter({
    name: 'linkhooks_attempts_total',
    help: 'Delivery attempts, by outcome (success or failure) and failure kind.',
    labelNames: ['outcome', 'kind'] as const,
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
    help: 'Deliveries by status.',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      const stats = await store.stats();
      for (const [status, n] of Object.entries(stats.byStatus)) this.set({ status }, n);
    },
  });
  new Gauge({
    name: 'linkhooks_disabled_endpoints',
    help: 'Endpoints disabled automatically or by hand.',
    registers: [registry],
    async collect() {
      this.set((await store.stats()).disabledEndpoints);
    },
  });
  return { registry, attempts, deliveries, duration };
}
