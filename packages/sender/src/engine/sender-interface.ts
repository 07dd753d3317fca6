/** The engine's interface: what `createSender` answers, and the only door to its store (design C3). */
import type { Registry } from 'prom-client';
import type { CreatedAccount } from '../accounts.js';
import type { SenderError } from '../errors.js';
import type { DeliveryFilter, KeyHolder, Page, Reenabled, StoreCapabilities } from '../store/port.js';
import type {
  AccountRecord,
  AttemptRecord,
  DeliveryRecord,
  EndpointRecord,
  EventRecord,
} from '../store/records.js';
import type { AccountAdministration } from './account-admin.js';
import type { EndpointOperations } from './endpoint-operations.js';
import type { RotateOptions } from './endpoint-secrets.js';
import type { EndpointStatsOperations } from './endpoint-stats.js';
import type { PublishInput } from './event-input.js';
import type { PortalSessions } from './portal-sessions.js';
import type { PublishItem, PublishManyResult, PublishResult } from './publish-many.js';
import type { SealReport } from './seal-secrets.js';

export interface NewEndpointInput {
  url: string;
  events: string[];
  description?: string | null;
  /** Also send the Standard Webhooks headers on every attempt (design D32). Default false. */
  standardWebhooks?: boolean;
}

/** The engine: every operation on events, endpoints, deliveries and accounts, and its workers. */
export interface Sender
  extends EndpointOperations,
    EndpointStatsOperations,
    AccountAdministration,
    PortalSessions {
  /** Prometheus registry of this engine's metrics. */
  readonly metrics: Registry;
  /** What its store can do: the store's own capabilities. */
  readonly capabilities: StoreCapabilities;
  /**
   * Null while published events are made durable; once a publish failed because they no longer
   * can be (`storage_failed`: a disk sync that failed, design D33), that error until the process
   * restarts. The service's `/healthz` answers 503 with it.
   */
  storageFailure(): SenderError | null;
  /**
   * Validates the event, fans it out to the account's subscribed endpoints (design R8) and stores
   * its exact bytes and one delivery per endpoint before it returns (design I2).
   */
  publish(accountId: string, input: PublishInput): Promise<PublishResult>;
  /**
   * Publishes many events at once; they are written together (one transaction, one sync). Each
   * item answers on its own: an invalid one is a `SenderError` in its place, the others are stored.
   * A broken store rejects the call, once every item's write has settled.
   */
  publishMany(items: readonly PublishItem[]): Promise<PublishManyResult>;
  /**
   * Sends a signed sample event to one endpoint, marked as a test (design D42) and logged like any
   * delivery. The event must be one the endpoint subscribes to; by default its first one.
   */
  sendTestEvent(accountId: string, endpointId: string, event?: string): Promise<PublishResult>;

  createEndpoint(accountId: string, input: NewEndpointInput): Promise<EndpointRecord>;
  updateEndpoint(accountId: string, id: string, patch: Partial<NewEndpointInput>): Promise<EndpointRecord>;
  /**
   * A fresh secret; the replaced one keeps signing for the grace (default 24 h, at most 7 days,
   * 0 ends it at once: design D38, D39).
   */
  rotateSecret(accountId: string, id: string, options?: RotateOptions): Promise<EndpointRecord>;
  getEndpoint(accountId: string, id: string): Promise<EndpointRecord>;
  listEndpoints(accountId: string): Promise<EndpointRecord[]>;
  /**
   * Deletes an endpoint with its deliveries and their attempts (design D78): at once gone for every
   * endpoint route and from fan-out, its deliveries then removed a bounded step at a time, so a
   * large log never holds the store for long; resolves once all are gone, or after 10 s with the
   * rest going on in the background.
   */
  deleteEndpoint(accountId: string, id: string): Promise<void>;
  /**
   * Re-enables an endpoint: counter reset, held deliveries resumed, skipped ones replayed if asked.
   * Answered once they are moved (made held, for a paused endpoint), or after 10 s with the rest
   * going on (the counts are those moved by then).
   */
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
  /** The working key an API key is, with its account, or null (a session keeps the key's id). */
  authenticateKey(apiKey: string): Promise<KeyHolder | null>;
  /** The account of a session signed in with key `keyId`, while that key still works (design D37). */
  authenticateSession(accountId: string, keyId: string): Promise<AccountRecord | null>;

  /**
   * Encrypts every endpoint secret not yet under the current master key (plaintext ones, and ones
   * under a previous key) in bounded batches; safe from several processes at once. Run it once
   * before `start()` when a key is set: a plaintext secret is refused once a key is set.
   */
  sealSecrets(): Promise<SealReport>;

  /** Runs every delivery due now; for tests and scripts driving virtual time. */
  tick(): Promise<number>;
  /**
   * Deletes final deliveries older than the retention period, previous secrets past their grace
   * (design D38) and portal links that expired unused (design D54), and finishes endpoint
   * deletions cut short (design D78); resolves with how many deliveries it pruned.
   */
  pruneLog(): Promise<number>;
  /** Attempts in flight on this engine's workers. */
  readonly inFlight: number;
  start(): void;
  /** Stops claiming, waits up to `graceMs` (default 30 s) for attempts in flight, releases the rest. */
  stop(graceMs?: number): Promise<void>;
}
