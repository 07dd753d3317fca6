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
  /**
   * How long each call to the store may take. Default 5 s: past it, a claim answers
   * `idempotency_unavailable` (503, retried) well inside the service's 30 s, where a client that
   * queues its commands while Redis is down (ioredis by default) held the delivery past them.
   */
  storeTimeoutMs?: number;
}

export const DEFAULT_STORE_TIMEOUT_MS = 5_000;

/**
 * The option, checked (also when an adapter is created): a time-out that is not a positive number of
 * ms would refuse every delivery.
 */
export function storeTimeoutOf(ms: number | undefined): number {
  if (ms === undefined) return DEFAULT_STORE_TIMEOUT_MS;
  if (!Number.isFinite(ms) || ms <= 0 || ms > 2_147_483_647) {
    throw new TypeError(
      `linkhooks: idempotency.storeTimeoutMs must be a number of milliseconds above 0, got ${ms}`,
    );
  }
  return ms;
}

/**
 * The idempotency options, checked when an adapter is created: a claim or a memory of under a
 * second was most likely given in seconds (`inFlightTtlMs: 60`), and would let a retry of a
 * delivery still running claim it again.
 */
export function checkIdempotencyOptions(options: IdempotencyOptions): void {
  storeTimeoutOf(options.storeTimeoutMs);
  for (const name of ['inFlightTtlMs', 'completedTtlMs'] as const) {
    const ms = options[name];
    if (ms !== undefined && !(Number.isFinite(ms) && ms >= 1000)) {
      throw new TypeError(
        `linkhooks: idempotency.${name} is in milliseconds and must be at least 1000 (a second), got ${ms}`,
      );
    }
  }
}

class StoreTimeout extends Error {
  constructor(ms: number) {
    super(`the idempotency store did not answer within ${ms} ms`);
    this.name = 'StoreTimeout';
  }
}

/** `call`'s result, or a StoreTimeout after `ms`. */
function within<T>(call: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreTimeout(ms)), ms);
  });
  return Promise.race([call, late]).finally(() => clearTimeout(timer));
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
  const ms = storeTimeoutOf(options.storeTimeoutMs);
  const token = newToken();
  let claim: Awaited<ReturnType<IdempotencyStore['claim']>>;
  // A store that throws rather than reject is unreachable all the same.
  const claiming = Promise.resolve().then(() =>
    store.claim(key, token, options.inFlightTtlMs ?? DEFAULT_IN_FLIGHT_TTL_MS),
  );
  try {
    claim = await within(claiming, ms);
  } catch (cause) {
    if (cause instanceof StoreTimeout) {
      // A claim that lands later is let go, so the service's retry is not told it is in flight.
      claiming
        .then((late) => (late === 'claimed' ? store.release(key, token) : undefined))
        .catch(() => undefined);
    }
    throw new WebhookError('idempotency_unavailable', 'The idempotency store could not be reached.', {
      cause,
      hint:
        cause instanceof StoreTimeout
          ? `${cause.message}. A Redis client that queues commands while it reconnects waits for Redis to come back: with ioredis, new Redis(url, { maxRetriesPerRequest: 1 }) fails at once instead.`
          : 'The service retries the delivery; nothing is lost.',
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
    await within(
      Promise.resolve().then(() => store.release(key, token)),
      ms,
    ).catch(() => undefined);
    throw error;
  }
  try {
    const completing = () => store.complete(key, token, options.completedTtlMs ?? DEFAULT_COMPLETED_TTL_MS);
    await within(Promise.resolve().then(completing), ms);
  } catch (cause) {
    // The work is done, so the delivery is still acknowledged; at worst a later duplicate runs
    // again once the claim lapses, which at-least-once delivery already allows.
    options.onStoreError?.(cause);
  }
  return { status: 'ran', value };
}
