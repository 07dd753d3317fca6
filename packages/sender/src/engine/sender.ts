/**
 * `createSender`: the engine the platform runs, and the only door to its store. It validates and
 * fans out events, stores them durably before `publish` returns, delivers through workers on the
 * retry schedule, disables endpoints that keep failing, and keeps the delivery log. The management
 * API and the service CLI call its methods, never the store.
 */
import { isEventName, sampleEventData } from '@linkhooks/protocol';
import pino, { type Logger } from 'pino';
import type { Registry } from 'prom-client';
import { authenticateApiKey, type CreatedAccount, createAccount } from '../accounts.js';
import { systemClock } from '../clock.js';
import type { AddressPolicy } from '../delivery/address-guard.js';
import { createDeliveryClient } from '../delivery/http-client.js';
import { newId } from '../domain/ids.js';
import { isSenderError, SenderError } from '../errors.js';
import { redaction } from '../log-redaction.js';
import { createMetrics } from '../metrics.js';
import { withSecretCipher } from '../store/encrypted-secrets.js';
import type { DeliveryFilter, Page, PublishTarget, Reenabled } from '../store/port.js';
import type {
  AccountRecord,
  AttemptRecord,
  DeliveryRecord,
  EndpointRecord,
  EventRecord,
} from '../store/records.js';
import { createSecretCipher, noSecretCipher, parseMasterKey } from '../store/secret-cipher.js';
import { createWorker } from '../worker/worker.js';
import { endpointOperations } from './endpoint-operations.js';
import type { RotateOptions } from './endpoint-secrets.js';
import { buildEvent, type PublishInput } from './event-input.js';
import { observeAttempts } from './observe-attempts.js';
import { type SenderOptions, settingsOf } from './options.js';
import { type PublishItem, type PublishManyResult, type PublishResult, publishEach } from './publish-many.js';
import { createQuotaGuard } from './quotas.js';

export type { RotateOptions } from './endpoint-secrets.js';
export type { PublishInput } from './event-input.js';
export type { SenderOptions } from './options.js';
export type { Quotas } from './quotas.js';

export const USER_AGENT = 'linkhooks/0.0.0';

export type { PublishItem, PublishManyResult, PublishResult } from './publish-many.js';

export interface NewEndpointInput {
  url: string;
  events: string[];
  description?: string | null;
  /** Also send the Standard Webhooks headers on every attempt (design D29). Default false. */
  standardWebhooks?: boolean;
}

/** The engine: every operation on events, endpoints, deliveries and accounts, and its workers. */
export interface Sender {
  /** Prometheus registry of this engine's metrics. */
  readonly metrics: Registry;
  /**
   * Validates the event, fans it out to the account's subscribed endpoints (design R8) and stores
   * its exact bytes and one delivery per endpoint before it returns (design I2).
   */
  publish(accountId: string, input: PublishInput): Promise<PublishResult>;
  /**
   * Publishes many events at once; they are written together (one transaction, one sync). Each
   * item answers on its own: an invalid one is a `SenderError` in its place, the others are stored.
   */
  publishMany(items: readonly PublishItem[]): Promise<PublishManyResult>;
  /**
   * Sends a signed sample event to one endpoint, marked as a test (design D44) and logged like any
   * delivery. The event must be one the endpoint subscribes to; by default its first one.
   */
  sendTestEvent(accountId: string, endpointId: string, event?: string): Promise<PublishResult>;

  createEndpoint(accountId: string, input: NewEndpointInput): Promise<EndpointRecord>;
  updateEndpoint(accountId: string, id: string, patch: Partial<NewEndpointInput>): Promise<EndpointRecord>;
  /**
   * A fresh secret; the replaced one keeps signing for the grace (default 24 h, at most 7 days,
   * 0 ends it at once: design D40, D41).
   */
  rotateSecret(accountId: string, id: string, options?: RotateOptions): Promise<EndpointRecord>;
  getEndpoint(accountId: string, id: string): Promise<EndpointRecord>;
  listEndpoints(accountId: string): Promise<EndpointRecord[]>;
  deleteEndpoint(accountId: string, id: string): Promise<void>;
  /** Re-enables an endpoint: counter reset, held deliveries resumed, skipped ones replayed if asked. */
  reenableEndpoint(accountId: string, id: string, options?: { replaySkipped?: boolean }): Promise<Reenabled>;

  /** Schedules one delivery for an attempt now. */
  retryDelivery(accountId: string, deliveryId: string): Promise<DeliveryRecord>;
  listDeliveries(accountId: string, filter: DeliveryFilter): Promise<Page<DeliveryRecord>>;
  getDelivery(
    accountId: string,
    id: string,
  ): Promise<{ delivery: DeliveryRecord; attempts: AttemptRecord[] }>;
  /** The event's record, with the exact bytes its deliveries send. */
  getEvent(accountId: string, id: string): Promise<EventRecord>;

  /** Creates an account with a fresh API key, shown once. */
  createAccount(input: { name: unknown; plan: unknown }): Promise<CreatedAccount>;
  getAccount(id: string): Promise<AccountRecord | null>;
  /** The account an API key belongs to, or null. */
  authenticateApiKey(apiKey: string): Promise<AccountRecord | null>;

  /** Runs every delivery due now; for tests and scripts driving virtual time. */
  tick(): Promise<number>;
  /**
   * Deletes final deliveries older than the retention period, and previous secrets past their
   * grace (design D40); resolves with how many deliveries.
   */
  pruneLog(): Promise<number>;
  /** Attempts in flight on this engine's workers. */
  readonly inFlight: number;
  start(): void;
  /** Stops claiming, waits up to `graceMs` (default 30 s) for attempts in flight, releases the rest. */
  stop(graceMs?: number): Promise<void>;
}

export function createSender(options: SenderOptions): Sender {
  const settings = settingsOf(options);
  const store = withSecretCipher(
    options.store,
    options.masterKey ? createSecretCipher(parseMasterKey(options.masterKey)) : noSecretCipher,
  );
  const clock = options.clock ?? systemClock;
  const addressPolicy: AddressPolicy = { allowPrivateNetworks: options.allowPrivateNetworks ?? false };
  const logger: Logger = options.logger ?? pino({ enabled: false, redact: redaction });
  const client =
    options.client ??
    createDeliveryClient({
      timeoutMs: settings.timeoutMs,
      // Up to 16 keep-alive connections per origin: more cost a TLS handshake each and measured
      // slower; requests beyond them wait for a socket within the attempt's deadline (design D25).
      connectionsPerOrigin: Math.min(16, settings.perOriginCap),
      allowPrivateNetworks: addressPolicy.allowPrivateNetworks,
      ...(options.ca ? { ca: options.ca } : {}),
      ...(options.resolve ? { resolve: options.resolve } : {}),
    });
  const metrics = createMetrics(store);
  const quota = createQuotaGuard(settings.quotas, clock);

  const worker = createWorker({
    queue: store,
    client,
    clock,
    rules: settings.rules,
    userAgent: USER_AGENT,
    concurrency: settings.concurrency,
    perEndpointCap: settings.perEndpointCap,
    perAccountCap: settings.perAccountCap,
    perOriginCap: settings.perOriginCap,
    batchSize: settings.batchSize,
    leaseMs: settings.leaseMs,
    renewEveryMs: settings.renewEveryMs,
    pollIntervalMs: settings.pollIntervalMs,
    // A record a network round trip away would hold the slot idle; in-process records are batched
    // better when slots free at the record.
    freeSlotOnResponse: store.capabilities.recordsOverNetwork,
    onAttempt: observeAttempts({
      metrics,
      logger,
      onEndpointDisabled: options.onEndpointDisabled,
      onAttempt: options.onAttempt,
    }),
    onError: (error) => logger.error({ err: error }, 'worker error'),
  });
  const unsubscribe = store.subscribe?.(() => worker.wake());

  const notFound = (what: string, id: string) => new SenderError('not_found', `no ${what} ${id}`);
  const found = <T>(value: T | null, what: string, id: string): T => {
    if (value === null) throw notFound(what, id);
    return value;
  };

  /** A publish within the account's event rate; an event refused as invalid gives its token back. */
  async function publishCounted(accountId: string, input: PublishInput) {
    quota.event(accountId);
    try {
      return await publishTo(accountId, input);
    } catch (error) {
      if (isSenderError(error) && error.status < 500) quota.refundEvent(accountId);
      throw error;
    }
  }

  async function publishTo(accountId: string, input: PublishInput, target: PublishTarget = {}) {
    const event = buildEvent(accountId, input, clock.now());
    const deliveries = await store.publish(event, () => newId('dlv', event.createdAt), target);
    if (deliveries.some((d) => d.status === 'pending')) worker.wake();
    return { eventId: event.id, deliveries };
  }

  const endpoints = endpointOperations({ store, clock, addressPolicy, resolve: options.resolve, quota });
  const { getEndpoint, live } = endpoints;

  return {
    metrics: metrics.registry,
    publish: (accountId, input) => publishCounted(accountId, input),
    publishMany: (items) => publishEach(items, publishCounted),

    async sendTestEvent(accountId, endpointId, event) {
      const endpoint = await getEndpoint(accountId, endpointId);
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
      quota.testSend(accountId);
      return publishTo(accountId, { event: name, data: sampleEventData(name) }, { endpointId, test: true });
    },

    createEndpoint: endpoints.createEndpoint,
    updateEndpoint: endpoints.updateEndpoint,
    rotateSecret: endpoints.rotateSecret,
    getEndpoint,
    listEndpoints: endpoints.listEndpoints,

    async deleteEndpoint(accountId, id) {
      if (!(await store.deleteEndpoint(accountId, id))) throw notFound('endpoint', id);
    },

    async reenableEndpoint(accountId, id, { replaySkipped = false } = {}) {
      const result = await store.reenableEndpoint(accountId, id, { replaySkipped, now: clock.now() });
      worker.wake();
      const reenabled = found(result, 'endpoint', id);
      return { ...reenabled, endpoint: live(reenabled.endpoint) };
    },

    async retryDelivery(accountId, deliveryId) {
      quota.retry(accountId);
      const result = await store.retryNow(accountId, deliveryId, clock.now());
      if (!result.ok) {
        if (result.reason === 'not_found') throw notFound('delivery', deliveryId);
        if (result.reason === 'endpoint_disabled') {
          throw new SenderError('endpoint_disabled', 'the endpoint is disabled; re-enable it first');
        }
        throw new SenderError('delivery_in_flight', 'an attempt of this delivery is in flight');
      }
      worker.wake();
      return result.delivery;
    },

    listDeliveries: (accountId, filter) => store.listDeliveries(accountId, filter),
    getDelivery: async (accountId, id) => found(await store.getDelivery(accountId, id), 'delivery', id),
    getEvent: async (accountId, id) => found(await store.getEvent(accountId, id), 'event', id),

    createAccount: (input) => createAccount(store, input, clock),
    getAccount: (id) => store.getAccount(id),
    authenticateApiKey: (apiKey) => authenticateApiKey(store, apiKey),

    tick: () => worker.tick(),
    async pruneLog() {
      await store.dropExpiredSecrets(clock.now());
      return store.pruneBefore(clock.now() - settings.retentionMs);
    },
    get inFlight() {
      return worker.inFlight;
    },
    start: () => worker.start(),
    async stop(graceMs) {
      await worker.stop(graceMs);
      unsubscribe?.();
      // Attempts still running past the grace period were released; abort their requests.
      if (worker.inFlight > 0) await client.destroy();
      else await client.close();
    },
  };
}
