/**
 * The idempotency store port (design R15: delivery is at-least-once, so receivers de-duplicate).
 * Three operations, each atomic in the store: claim a key for one run, mark it completed, or
 * release it after a failure so the retry runs again. A token ties complete/release to the claim
 * that made them, so a run whose claim expired cannot clear another run's claim.
 */
export type ClaimResult = 'claimed' | 'in_flight' | 'completed';

export interface IdempotencyStore {
  /** Claims `key` for `ttlMs` unless it is claimed or completed already. */
  claim(key: string, token: string, ttlMs: number): Promise<ClaimResult>;
  /** Marks `key` completed for `ttlMs`, if the claim is still `token`'s or has lapsed. */
  complete(key: string, token: string, ttlMs: number): Promise<void>;
  /** Frees `key` if it is still claimed by `token`. */
  release(key: string, token: string): Promise<void>;
}

/** A crashed receiver does not block the retry forever (design D12). */
export const DEFAULT_IN_FLIGHT_TTL_MS = 60_000;
/** At least 24 h: longer than the whole 10.5 h retry schedule (design R12, design D12). */
export const DEFAULT_COMPLETED_TTL_MS = 24 * 60 * 60 * 1000;
