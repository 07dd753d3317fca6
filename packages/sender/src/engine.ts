/**
 * `createSender`: the engine the platform runs (DESIGN: Sender). It validates and fans out events,
 * stores them durably before `publish` returns, delivers through workers on the retry schedule,
 * disables endpoints that keep failing, and keeps the delivery log.
 */

import {
  EVENT_NAMES,
  type EventName,
  eventSchemas,
  formatTimestamp,
  generateSecret,
  isEventName,
  sampleEventData,
} from '@linkhooks/protocol';
import pino, { type Logger } from 'pino';
import { type Clock, systemClock } from './clock.js';
import { type AddressPolicy, checkAddress, checkUrl, type LookupFunction } from './delivery/address-guard.js';
import { dnsLookup } from './delivery/dns.js';
import { createDeliveryClient, type DeliveryClient } from './delivery/http-client.js';
import { DEFAULT_DISABLE_POLICY, type DisablePolicy } from './domain/disable-rule.js';
import { newId } from './domain/ids.js';
import {
  ATTEMPT_TIMEOUT_MS,
  assertSchedule,
  RETRY_DELAYS_MS,
  type RetrySchedule,
} from './domain/schedule.js';
import { SenderError } from './errors.js';
import { createMetrics } from './metrics.js';
import { withSecretCipher } from './store/encrypted-secrets.js';
import type { DeliveryFilter, Page, SenderStore } from './store/port.js';
import type { AttemptRecord, DeliveryRecord, EndpointRecord, EventRecord } from './store/records.js';
import { createSecretCipher, noSecretCipher, parseMasterKey } from './store/secret-cipher.js';
import type { AttemptReport } from './worker/attempt.js';
import { createWorker } from './worker/worker.js';

export const USER_AGENT = 'linkhooks/0.0.0';

export interface SenderOptions {
  store: SenderStore;
  clock?: Clock;
  /** Retry delays in ms (SPEC 8 by default). */
  retryDelaysMs?: readonly number[];
  /** Multiplies the retry delays: 0.001 runs the whole schedule in ~38 s (demos, checks). */
  timeScale?: number;
  /** DESIGN: Disabling. Default: 10 failed deliveries in a row. */
  disablePolicy?: Partial<DisablePolicy>;
  /** Whole-attempt deadline. Default 30 s (SPEC 8). */
  attemptTimeoutMs?: number;
  /** Claim lease; must be longer than the attempt deadline. Default deadline + 30 s. */
  leaseMs?: number;
  concurrency?: number;
  perEndpointCap?: number;
  batchSize?: number;
  pollIntervalMs?: number;
  /** Development only: deliver to loopback and private networks. Never plain HTTP. */
  allowPrivateNetworks?: boolean;
  /** Extra CA certificates to trust (a test CA). */
  ca?: string | Buffer | Array<string | Buffer>;
  /** Name resolution, for tests. */
  resolve?: LookupFunction;
  /** Replace the HTTP client (tests). */
  client?: DeliveryClient;
  /** Told when an endpoint is disabled automatically. */
  onEndpointDisabled?: (endpoint: EndpointRecord) => void | Promise<void>;
  /** Told of every recorded attempt. */
  onAttempt?: (report: AttemptReport) => void;
  logger?: Logger;
  /** How long final deliveries stay in the log. Default 30 days. */
  retentionMs?: number;
  /**
   * Encrypts endpoint secrets at rest (AES-256-GCM): 32 bytes as hex or base64, e.g. the
   * service's LINKHOOKS_MASTER_KEY. Without it, secrets are stored as they are, and a store holding
   * encrypted ones refuses to hand them out rather than sign with ciphertext.
   */
  masterKey?: string;
}

export interface PublishInput {
  event: string;
  data: unknown;
  /** Defaults to now, in the envelope's `YYYY-MM-DDThh:mm:ssZ` form. */
  timestamp?: string;
}

export interface PublishResult {
  eventId: string;
  deliveries: DeliveryRecord[];
}

export interface NewEndpointInput {
  url: string;
  events: string[];
  description?: string | null;
}

const DEFAULT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

function positiveInt(name: string, value: number | undefined, fallback: number): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 1)
    throw new SenderError('invalid_option', `${name} must be a positive integer`);
  return v;
}

export function createSender(options: SenderOptions) {
  const store = withSecretCipher(
    options.store,
    options.masterKey ? createSecretCipher(parseMasterKey(options.masterKey)) : noSecretCipher,
  );
  const clock = options.clock ?? systemClock;
  const schedule: RetrySchedule = {
    delaysMs: options.retryDelaysMs ?? RETRY_DELAYS_MS,
    timeScale: options.timeScale ?? 1,
  };
  assertSchedule(schedule);
  const policy: DisablePolicy = { ...DEFAULT_DISABLE_POLICY, ...options.disablePolicy };
  const timeoutMs = positiveInt('attemptTimeoutMs', options.attemptTimeoutMs, ATTEMPT_TIMEOUT_MS);
  const leaseMs = positiveInt('leaseMs', options.leaseMs, timeoutMs + 30_000);
  if (leaseMs <= timeoutMs) {
    // A lease shorter than the attempt lets a second worker send while the first still waits.
    throw new SenderError(
      'invalid_option',
      'leaseMs must be longer than attemptTimeoutMs (DESIGN invariant 3)',
    );
  }
  const addressPolicy: AddressPolicy = { allowPrivateNetworks: options.allowPrivateNetworks ?? false };
  const logger =
    options.logger ??
    pino({ enabled: false, redact: { paths: ['secret', '*.secret', 'headers', '*.headers'], remove: true } });
  const client =
    options.client ??
    createDeliveryClient({
      timeoutMs,
      allowPrivateNetworks: addressPolicy.allowPrivateNetworks,
      ...(options.ca ? { ca: options.ca } : {}),
      ...(options.resolve ? { resolve: options.resolve } : {}),
    });
  const metrics = createMetrics(store);
  const retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;

  const onAttempt = (report: AttemptReport) => {
    const { attempt, applied, claim } = report;
    const outcome = attempt.failureKind ? 'failure' : 'success';
    metrics.attempts.inc({ outcome, kind: attempt.failureKind ?? 'none' });
    metrics.duration.observe({ outcome }, attempt.durationMs / 1000);
    if (applied.status === 'delivered' || applied.status === 'failed')
      metrics.deliveries.inc({ outcome: applied.status });
    logger.info(
      {
        delivery: claim.delivery.id,
        endpoint: claim.delivery.endpointId,
        attempt: attempt.number,
        status: attempt.statusCode,
        kind: attempt.failureKind,
        ms: attempt.durationMs,
        applied: applied.applied,
        next: applied.status,
      },
      'attempt',
    );
    if (applied.disabledEndpoint) {
      const endpoint = applied.disabledEndpoint;
      logger.warn({ endpoint: endpoint.id, failures: endpoint.consecutiveFailures }, 'endpoint disabled');
      Promise.resolve(options.onEndpointDisabled?.(endpoint)).catch((error) =>
        logger.error({ err: error }, 'onEndpointDisabled hook failed'),
      );
    }
    options.onAttempt?.(report);
  };

  const worker = createWorker({
    store,
    client,
    clock,
    schedule,
    policy,
    userAgent: USER_AGENT,
    concurrency: positiveInt('concurrency', options.concurrency, 64),
    perEndpointCap: positiveInt('perEndpointCap', options.perEndpointCap, 8),
    batchSize: positiveInt('batchSize', options.batchSize, 32),
    leaseMs,
    pollIntervalMs: positiveInt('pollIntervalMs', options.pollIntervalMs, 1000),
    // A record on PostgreSQL is a round trip of a few milliseconds under load: holding the slot
    // through it would leave requests idle. SQLite records in-process, where freeing slots one
    // response at a time only turns batched claims and records into more, smaller ones.
    freeSlotOnResponse: store.kind === 'postgres',
    onAttempt,
    onError: (error) => logger.error({ err: error }, 'worker error'),
  });

  const unsubscribe = store.subscribe?.(() => worker.wake());

  async function checkEndpointUrl(url: unknown): Promise<string> {
    if (typeof url !== 'string') throw new SenderError('invalid_endpoint', 'url must be a string');
    const checked = checkUrl(url, addressPolicy);
    if (!checked.ok) throw new SenderError('unsafe_url', `url is not allowed: ${checked.reason}`);
    const host = checked.url.hostname.replace(/^\[|\]$/g, '');
    // Checked again at every connection (DNS rebinding); this early check gives a clear error now.
    const addresses = await dnsLookup(host, options.resolve).catch((cause: unknown) => {
      throw new SenderError('invalid_endpoint', `url host ${host} does not resolve`, { cause });
    });
    for (const address of addresses) {
      const verdict = checkAddress(address, addressPolicy);
      if (!verdict.allowed) {
        throw new SenderError(
          'unsafe_url',
          `url resolves to ${address}, which is not allowed (${verdict.reason})`,
        );
      }
    }
    return checked.url.toString();
  }

  function checkEvents(events: unknown): EventName[] {
    if (!Array.isArray(events) || events.length === 0) {
      throw new SenderError(
        'invalid_endpoint',
        `events must be a non-empty array of: ${EVENT_NAMES.join(', ')}`,
      );
    }
    const unknown = events.filter((e) => !isEventName(e));
    if (unknown.length > 0) {
      throw new SenderError('invalid_endpoint', `unknown events: ${unknown.join(', ')}`, {
        details: { known: EVENT_NAMES },
      });
    }
    return [...new Set(events as EventName[])];
  }

  async function mustFindEndpoint(accountId: string, id: string): Promise<EndpointRecord> {
    const endpoint = await store.getEndpoint(accountId, id);
    if (!endpoint) throw new SenderError('not_found', `no endpoint ${id}`);
    return endpoint;
  }

  async function publishTo(
    accountId: string,
    input: PublishInput,
    target: { endpointId?: string } = {},
  ): Promise<PublishResult> {
    if (!isEventName(input?.event)) {
      throw new SenderError('invalid_event', `event must be one of: ${EVENT_NAMES.join(', ')}`);
    }
    const now = clock.now();
    const envelope = {
      event: input.event,
      timestamp: input.timestamp ?? formatTimestamp(now),
      data: input.data,
    };
    const parsed = eventSchemas[input.event].safeParse(envelope);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      throw new SenderError(
        'invalid_event',
        `invalid ${input.event} event at ${first?.path.join('.')}: ${first?.message}`,
        {
          details: parsed.error.issues.map((i) => ({ path: i.path, message: i.message })),
        },
      );
    }
    const flags = (envelope.data as { fraud_flags?: unknown[] }).fraud_flags;
    if (flags?.some((f) => typeof f !== 'string')) {
      // DESIGN: the sender emits strings; receivers accept anything.
      throw new SenderError('invalid_event', 'fraud_flags must be strings');
    }
    const event: EventRecord = {
      id: newId('evt', now),
      accountId,
      name: input.event,
      body: Buffer.from(JSON.stringify(envelope)),
      createdAt: now,
    };
    const deliveries = await store.publish(event, () => newId('dlv', now), target);
    if (deliveries.some((d) => d.status === 'pending')) worker.wake();
    return { eventId: event.id, deliveries };
  }

  return {
    store,
    metrics: metrics.registry,
    worker,

    /**
     * Validates the event, fans it out to the account's subscribed endpoints (SPEC 6 rule 2) and
     * stores its exact bytes and one delivery per endpoint before it returns.
     */
    publish: (accountId: string, input: PublishInput): Promise<PublishResult> => publishTo(accountId, input),

    /**
     * Sends a signed sample event to one endpoint, logged like any delivery. The event must be one
     * the endpoint subscribes to (SPEC 6 rule 2 holds for tests too); by default its first one.
     */
    async sendTestEvent(accountId: string, endpointId: string, event?: string): Promise<PublishResult> {
      const endpoint = await mustFindEndpoint(accountId, endpointId);
      if (!endpoint.enabled) {
        throw new SenderError('endpoint_disabled', 'the endpoint is disabled; re-enable it first');
      }
      const name = event ?? endpoint.events[0];
      if (!isEventName(name) || !endpoint.events.includes(name)) {
        throw new SenderError(
          'invalid_event',
          `event must be one the endpoint subscribes to: ${endpoint.events.join(', ')}`,
        );
      }
      return publishTo(accountId, { event: name, data: sampleEventData(name) }, { endpointId });
    },

    async createEndpoint(accountId: string, input: NewEndpointInput): Promise<EndpointRecord> {
      const url = await checkEndpointUrl(input?.url);
      const events = checkEvents(input.events);
      const now = clock.now();
      return store.createEndpoint({
        id: newId('ep', now),
        accountId,
        url,
        events,
        secret: generateSecret(),
        description: input.description ?? null,
        now,
      });
    },

    async updateEndpoint(
      accountId: string,
      id: string,
      patch: Partial<NewEndpointInput>,
    ): Promise<EndpointRecord> {
      await mustFindEndpoint(accountId, id);
      const next = {
        ...(patch.url !== undefined ? { url: await checkEndpointUrl(patch.url) } : {}),
        ...(patch.events !== undefined ? { events: checkEvents(patch.events) } : {}),
        ...(patch.description !== undefined ? { description: patch.description } : {}),
      };
      const updated = await store.updateEndpoint(accountId, id, next, clock.now());
      if (!updated) throw new SenderError('not_found', `no endpoint ${id}`);
      return updated;
    },

    async rotateSecret(accountId: string, id: string): Promise<EndpointRecord> {
      const updated = await store.updateEndpoint(accountId, id, { secret: generateSecret() }, clock.now());
      if (!updated) throw new SenderError('not_found', `no endpoint ${id}`);
      return updated;
    },

    getEndpoint: mustFindEndpoint,
    listEndpoints: (accountId: string) => store.listEndpoints(accountId),

    async deleteEndpoint(accountId: string, id: string): Promise<void> {
      if (!(await store.deleteEndpoint(accountId, id)))
        throw new SenderError('not_found', `no endpoint ${id}`);
    },

    /** Re-enables an endpoint: counter reset, held deliveries resumed, skipped ones replayed if asked. */
    async reenableEndpoint(accountId: string, id: string, { replaySkipped = false } = {}) {
      const result = await store.reenableEndpoint(accountId, id, { replaySkipped, now: clock.now() });
      if (!result) throw new SenderError('not_found', `no endpoint ${id}`);
      worker.wake();
      return result;
    },

    /** Schedules one delivery for an attempt now. */
    async retryDelivery(accountId: string, deliveryId: string): Promise<DeliveryRecord> {
      const result = await store.retryNow(accountId, deliveryId, clock.now());
      if (!result.ok) {
        if (result.reason === 'not_found') throw new SenderError('not_found', `no delivery ${deliveryId}`);
        if (result.reason === 'endpoint_disabled') {
          throw new SenderError('endpoint_disabled', 'the endpoint is disabled; re-enable it first');
        }
        throw new SenderError('delivery_in_flight', 'an attempt of this delivery is in flight');
      }
      worker.wake();
      return result.delivery;
    },

    listDeliveries: (accountId: string, filter: DeliveryFilter): Promise<Page<DeliveryRecord>> =>
      store.listDeliveries(accountId, filter),

    async getDelivery(
      accountId: string,
      id: string,
    ): Promise<{ delivery: DeliveryRecord; attempts: AttemptRecord[] }> {
      const found = await store.getDelivery(accountId, id);
      if (!found) throw new SenderError('not_found', `no delivery ${id}`);
      return found;
    },

    /** Runs every delivery due now; for tests and scripts driving virtual time. */
    tick: () => worker.tick(),

    /** Deletes final deliveries older than the retention period. */
    pruneLog: () => store.pruneBefore(clock.now() - retentionMs),

    start() {
      worker.start();
    },

    /** Stops claiming, waits up to `graceMs` (default 30 s) for attempts in flight, releases the rest. */
    async stop(graceMs?: number) {
      await worker.stop(graceMs);
      unsubscribe?.();
      // Attempts still running past the grace period were released; abort their requests.
      if (worker.inFlight > 0) await client.destroy();
      else await client.close();
    },
  };
}

export type Sender = ReturnType<typeof createSender>;
