import { WebhookError } from '../errors.js';
import { DEFAULT_COMPLETED_TTL_MS, DEFAULT_IN_FLIGHT_TTL_MS, type IdempotencyStore } from './store.js';

export interface IdempotencyOptions {
  store: IdempotencyStore;
  /** How long a claim lasts if the process dies mid-run. Default 60 s. */
  inFlightTtlMs?: number;
  /** How long a completed key is remembered. Default 24 h (> the 10.5 h retry schedule). */
  completedTtlMs?: number;
  /** Told when a completed run could not be recorded (the delivery is still acknowledged). */
  onStoreError?: (error: unknown) => void;
}

export type RunOnceResult<T> = { status: 'ran'; value: T } | { status: 'duplicate' };

let counter = 0;
function newToken(): string {
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
  return `${Date.now().toString(36)}.${counter.toString(36)}.${Math.random().toString(36).slice(2)}`;
}

/**
 * Runs `fn` at most once per key to completion: claim → run → complete. If `fn` throws, the key
 * is released so the service's retry runs it again, and the error is rethrown. A key already
 * completed resolves `{status: 'duplicate'}`; a key in flight elsewhere throws `WebhookError`
 * `duplicate_in_flight` (409 in the adapters: the service retries later).
 *
 * @example
 * const r = await runOnce({ store }, `click:${event.data.click_id}`, () => saveClick(event));
 */
export async function runOnce<T>(
  options: IdempotencyOptions,
  key: string,
  fn: () => T | Promise<T>,
): Promise<RunOnceResult<T>> {
  const { store } = options;
  const token = newToken();
  let claim: Awaited<ReturnType<IdempotencyStore['claim']>>;
  try {
    claim = await store.claim(key, token, options.inFlightTtlMs ?? DEFAULT_IN_FLIGHT_TTL_MS);
  } catch (cause) {
    throw new WebhookError('idempotency_unavailable', 'The idempotency store could not be reached.', {
      cause,
    });
  }
  if (claim === 'completed') return { status: 'duplicate' };
  if (claim === 'in_flight') {
    throw new WebhookError('duplicate_in_flight', 'This delivery is being handled by another request.', {
      hint: 'The service retries it later; nothing is lost.',
      details: { key },
    });
  }
  let value: T;
  try {
    value = await fn();
  } catch (error) {
    await store.release(key, token).catch(() => undefined);
    throw error;
  }
  try {
    await store.complete(key, token, options.completedTtlMs ?? DEFAULT_COMPLETED_TTL_MS);
  } catch (cause) {
    // The work is done, so the delivery is still acknowledged; at worst a later duplicate runs
    // again once the claim lapses, which at-least-once delivery already allows.
    options.onStoreError?.(cause);
  }
  return { status: 'ran', value };
}
