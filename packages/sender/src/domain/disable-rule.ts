/**
 * Automatic disabling (design R14: 10 consecutive failures disable the endpoint). What
 * "consecutive" counts is design D1: by default a failure is a *delivery* that ends `failed`
 * (all six attempts failed) and any delivered delivery resets the count. Counting per attempt is
 * an option, off by default: one outage of an hour would otherwise disable an endpoint after
 * only a couple of events, long before the retry schedule had a chance to get them through.
 */
import type { AttemptDecision } from './delivery-state.js';

export const DISABLE_THRESHOLD = 10;

export interface DisablePolicy {
  /** Consecutive failures that disable the endpoint. Default 10 (design R14). */
  threshold: number;
  /** `delivery` (default, design D1) or `attempt`. */
  countPer: 'delivery' | 'attempt';
}

export const DEFAULT_DISABLE_POLICY: DisablePolicy = { threshold: DISABLE_THRESHOLD, countPer: 'delivery' };

export interface EndpointDecision {
  consecutiveFailures: number;
  /** True when this outcome crosses the threshold: disable now. */
  disable: boolean;
}

/** What an attempt's decision does to its endpoint's failure count. */
export function decideEndpoint(
  consecutiveFailures: number,
  decision: AttemptDecision,
  policy: DisablePolicy,
): EndpointDecision {
  let count = consecutiveFailures;
  if (decision.status === 'delivered') count = 0;
  else if (policy.countPer === 'attempt' || decision.final === 'failed') count += 1;
  return { consecutiveFailures: count, disable: count >= policy.threshold };
}
