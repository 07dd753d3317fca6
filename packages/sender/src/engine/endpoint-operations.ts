/**
 * Day-to-day operations on one endpoint: pausing and resuming it (design D34) and recovering its
 * failed deliveries (design D35). Part of the engine: the API and the library reach them through
 * `createSender`.
 */
import type { Clock } from '../clock.js';
import { NOTHING_MOVED } from '../domain/queue-moves.js';
import { RECOVER_BATCH, REMAINING_COUNTED_AT_MOST } from '../domain/recovery.js';
import { SenderError } from '../errors.js';
import type { SenderStore } from '../store/port.js';
import type { EndpointRecord } from '../store/records.js';
import type { QueueSettling } from './queue-settling.js';

export { RECOVER_BATCH, REMAINING_COUNTED_AT_MOST } from '../domain/recovery.js';

/** A time as the API writes it (ISO 8601 in UTC), or a Date, or epoch milliseconds. */
export type TimeInput = string | Date | number;

export interface RecoverInput {
  /** Failed deliveries created at or after this time. */
  since: TimeInput;
  /** …and before this one; now by default. */
  until?: TimeInput;
}

export interface Recovered {
  /** Failed deliveries scheduled for one more attempt now. */
  recovered: number;
  /** Failed deliveries in the range still to recover, counted up to 100,000: call again for them. */
  remaining: number;
}

export interface EndpointOperations {
  /**
   * Pauses an endpoint: its deliveries wait, unattempted, and new events for it are stored and wait
   * too; nothing is counted against it. An attempt already under way finishes.
   *
   * @example
   * await sender.pauseEndpoint(accountId, endpointId); // receiver maintenance
   * await sender.resumeEndpoint(accountId, endpointId); // what waited goes out now
   */
  pauseEndpoint(accountId: string, id: string): Promise<EndpointRecord>;
  /**
   * Resumes a paused endpoint: what waited is delivered, the due ones at once. Answered once every
   * held delivery is claimable again, or after 10 s with the rest going on (`resumed` counts those
   * moved by then).
   */
  resumeEndpoint(accountId: string, id: string): Promise<{ endpoint: EndpointRecord; resumed: number }>;
  /**
   * Gives the endpoint's failed deliveries created in [since, until) one more attempt each, up to
   * RECOVER_BATCH per call, the oldest first.
   *
   * @example
   * let left = 1;
   * while (left > 0) ({ remaining: left } = await sender.recoverEndpoint(account, id, { since: '2026-11-20T00:00:00Z' }));
   */
  recoverEndpoint(accountId: string, id: string, input: RecoverInput): Promise<Recovered>;
}

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

/** Epoch milliseconds of `value`, or a 400 naming `name` and the form it takes. */
export function timeOf(value: unknown, name: string): number {
  const ms =
    value instanceof Date
      ? value.getTime()
      : typeof value === 'number'
        ? value
        : typeof value === 'string' && ISO_UTC.test(value)
          ? Date.parse(value)
          : Number.NaN;
  if (!Number.isFinite(ms)) {
    throw new SenderError('invalid_request', `${name} must be a UTC time such as 2026-11-22T09:00:00Z`);
  }
  return ms;
}

export function endpointOperations(deps: {
  store: SenderStore;
  clock: Clock;
  /** Takes one of the account's recoveries this minute, or throws `rate_limited`. */
  takeRecovery: (accountId: string) => void;
  wake: () => void;
  settling: QueueSettling;
}): EndpointOperations {
  const { store, clock } = deps;
  const notFound = (id: string) => new SenderError('not_found', `no endpoint ${id}`);
  const refuseDisabled = (): never => {
    throw new SenderError('endpoint_disabled', 'the endpoint is disabled; re-enable it first');
  };
  const refusePaused = (): never => {
    throw new SenderError('endpoint_paused', 'the endpoint is paused; resume it first');
  };
  return {
    async pauseEndpoint(accountId, id) {
      const endpoint = await store.pauseEndpoint(accountId, id, clock.now());
      if (!endpoint) throw notFound(id);
      // Nothing of it is claimed from now on (design D34): the holds need not be waited for.
      deps.settling.inBackground({ accountId, id });
      return endpoint;
    },

    async resumeEndpoint(accountId, id) {
      const result = await store.resumeEndpoint(accountId, id, clock.now());
      if (!result) throw notFound(id);
      if (result.resumed > 0) deps.wake();
      const moved = await deps.settling.answered(
        { accountId, id },
        {
          ...NOTHING_MOVED,
          released: result.resumed,
          settling: result.settling,
        },
      );
      return { endpoint: result.endpoint, resumed: moved.released };
    },

    async recoverEndpoint(accountId, id, input) {
      const now = clock.now();
      const since = timeOf(input?.since, 'since');
      // `until` is exclusive: by default, everything created up to this millisecond.
      const until = input.until === undefined ? now + 1 : timeOf(input.until, 'until');
      // The future first: without an until, the one it would break is the caller's own since.
      if (since > now) throw new SenderError('invalid_request', 'since must not be in the future');
      if (since >= until) throw new SenderError('invalid_request', 'since must be before until');
      // A call refused for the endpoint's state uses none of the account's recoveries.
      const endpoint = await store.getEndpoint(accountId, id);
      if (!endpoint) throw notFound(id);
      if (!endpoint.enabled) refuseDisabled();
      if (endpoint.paused) refusePaused();
      deps.takeRecovery(accountId);
      const result = await store.recoverDeliveries(accountId, id, {
        since,
        until,
        limit: RECOVER_BATCH,
        now,
      });
      if (!result.ok) {
        if (result.reason === 'not_found') throw notFound(id);
        if (result.reason === 'endpoint_disabled') return refuseDisabled();
        return refusePaused();
      }
      // The worker is told before the count: what was recovered is committed, and goes out even
      // if the count then fails.
      if (result.recovered > 0) deps.wake();
      // Counted after the commit, so the transaction's locks never wait on it.
      const remaining = await store.countFailedDeliveries(id, {
        since,
        until,
        atMost: REMAINING_COUNTED_AT_MOST,
      });
      return { recovered: result.recovered, remaining };
    },
  };
}
