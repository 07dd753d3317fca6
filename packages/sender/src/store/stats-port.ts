/**
 * An endpoint's statistics over a window of time (design D45): one part of the store port
 * (port.ts), kept in a file of its own. Every count is read from the window's rows through an
 * index on (endpoint, time), or (endpoint, status, id) for deliveries, never from the endpoint's
 * whole history.
 */
import type { DeliveryStatus } from '../domain/delivery-state.js';
import { idsFrom } from '../domain/ids.js';

/** [since, until) in epoch milliseconds, cut into buckets of `bucketMs` counted from `since`. */
export interface StatsWindow {
  since: number;
  until: number;
  bucketMs: number;
}

/** Attempts that started in one bucket, by outcome. */
export interface AttemptBucket {
  /** The bucket's index from the window's start: it covers [since + i·bucketMs, since + (i+1)·bucketMs). */
  index: number;
  succeeded: number;
  failed: number;
  /** The mean and the longest duration of the bucket's attempts, in ms. */
  meanMs: number;
  maxMs: number;
}

export interface WindowStats {
  /** Deliveries created in the window, by their status now (statuses with none are left out). */
  deliveries: Partial<Record<DeliveryStatus, number>>;
  /** Only the buckets with at least one attempt, by index. */
  buckets: AttemptBucket[];
  /** Nearest-rank percentiles of the window's attempt durations; null without attempts. */
  p50Ms: number | null;
  p95Ms: number | null;
  lastSuccessAt: number | null;
  lastFailureAt: number | null;
}

export interface EndpointStatistics {
  /** Scoped: another account's endpoint is `null`, as if it did not exist (tenant isolation). */
  endpointStats(accountId: string, endpointId: string, window: StatsWindow): Promise<WindowStats | null>;
}

/**
 * The delivery ids made in the window, `[fromId, untilId)`: a delivery's id starts with the time it
 * was created (its event's), so its deliveries are counted by id from the index that ends in it.
 */
export function deliveryIdsOf(w: StatsWindow): { fromId: string; untilId: string } {
  return { fromId: idsFrom('dlv', w.since), untilId: idsFrom('dlv', w.until) };
}

/** The rank (1-based) of the nearest-rank percentile `p` of `n` values. */
export function nearestRank(p: number, n: number): number {
  return Math.max(1, Math.ceil(p * n));
}

/** Fold the per-bucket rows both stores answer into totals and last times. */
export function bucketsOf(
  rows: readonly Record<string, unknown>[],
): Pick<WindowStats, 'buckets' | 'lastSuccessAt' | 'lastFailureAt'> {
  let lastSuccessAt: number | null = null;
  let lastFailureAt: number | null = null;
  const buckets = rows.map((r) => {
    const success = r.last_success == null ? null : Number(r.last_success);
    const failure = r.last_failure == null ? null : Number(r.last_failure);
    if (success !== null && (lastSuccessAt === null || success > lastSuccessAt)) lastSuccessAt = success;
    if (failure !== null && (lastFailureAt === null || failure > lastFailureAt)) lastFailureAt = failure;
    return {
      index: Number(r.bucket),
      succeeded: Number(r.succeeded),
      failed: Number(r.failed),
      meanMs: Math.round(Number(r.mean_ms)),
      maxMs: Number(r.max_ms),
    };
  });
  buckets.sort((a, b) => a.index - b.index);
  return { buckets, lastSuccessAt, lastFailureAt };
}
