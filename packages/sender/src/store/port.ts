/**
 * The store port (CONVENTIONS 3): one interface, implemented by the memory, SQLite and PostgreSQL
 * stores, and one conformance battery (test/store-battery.ts) run against each. Every method that
 * changes several rows does so in one transaction (DESIGN: Invariants the stores keep).
 */
import type { EventName } from '@linkhooks/protocol';
import type { AttemptDecision, DeliveryStatus } from '../domain/delivery-state.js';
import type { DisablePolicy } from '../domain/disable-rule.js';
import type {
  AccountRecord,
  AttemptRecord,
  ClaimedDelivery,
  DeliveryRecord,
  EndpointRecord,
  EventRecord,
  Plan,
} from './records.js';

export interface NewAccount {
  id: string;
  name: string;
  plan: Plan;
  apiKeyHash: string;
  now: number;
}

export interface NewEndpoint {
  id: string;
  accountId: string;
  url: string;
  events: EventName[];
  secret: string;
  description: string | null;
  now: number;
}

export interface EndpointPatch {
  url?: string;
  events?: EventName[];
  secret?: string;
  description?: string | null;
}

export interface PublishTarget {
  endpointId?: string;
}

export interface ClaimRequest {
  now: number;
  limit: number;
  /** Longer than the attempt time-out (DESIGN invariant 3). */
  leaseMs: number;
  /** Deliveries one endpoint may have in flight; endpoints at the cap are skipped (invariant 6). */
  perEndpointCap: number;
  /**
   * Leases the caller holds whose request is over and whose attempt is being recorded: no longer
   * in flight to their endpoint, so they do not count against its cap. Their leases still hold
   * (they end with the record), so none of them is claimed again. A lease, not a delivery id: once
   * a lease has expired and another worker holds the delivery, its live lease still counts.
   */
  finishing?: readonly LeaseRef[];
}

/** One lease: the delivery and the token it was claimed with. */
export interface LeaseRef {
  deliveryId: string;
  leaseToken: string;
}

export interface AttemptResult {
  claim: Pick<ClaimedDelivery, 'leaseToken'> & { deliveryId: string };
  attempt: AttemptRecord;
  decision: AttemptDecision;
  policy: DisablePolicy;
  now: number;
}

export interface AttemptApplied {
  /** False when the lease was lost: another worker owns the delivery now (invariant 3). */
  applied: boolean;
  /** The delivery's status after the attempt (`held` if its endpoint got disabled). */
  status?: DeliveryStatus;
  /** Set when this attempt disabled the endpoint (invariant 5). */
  disabledEndpoint?: EndpointRecord;
}

export interface DeliveryFilter {
  endpointId?: string;
  status?: DeliveryStatus;
  event?: string;
  /** Opaque: the id of the last item of the previous page. */
  cursor?: string;
  limit: number;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export type RetryNowResult =
  | { ok: true; delivery: DeliveryRecord }
  | { ok: false; reason: 'not_found' | 'endpoint_disabled' | 'in_flight' };

export interface Reenabled {
  endpoint: EndpointRecord;
  resumed: number;
  replayed: number;
}

export interface StoreStats {
  byStatus: Record<DeliveryStatus, number>;
  disabledEndpoints: number;
}

export interface SenderStore {
  readonly kind: 'memory' | 'sqlite' | 'postgres';
  migrate(): Promise<void>;
  close(): Promise<void>;

  /** Rejects when the API key hash is already taken. */
  createAccount(input: NewAccount): Promise<AccountRecord>;
  getAccount(id: string): Promise<AccountRecord | null>;
  /** The account whose API key hashes to `apiKeyHash`, or null. */
  findAccountByApiKeyHash(apiKeyHash: string): Promise<AccountRecord | null>;

  createEndpoint(input: NewEndpoint): Promise<EndpointRecord>;
  /** Scoped: another account's endpoint is `null`, as if it did not exist (tenant isolation). */
  getEndpoint(accountId: string, id: string): Promise<EndpointRecord | null>;
  listEndpoints(accountId: string): Promise<EndpointRecord[]>;
  updateEndpoint(
    accountId: string,
    id: string,
    patch: EndpointPatch,
    now: number,
  ): Promise<EndpointRecord | null>;
  /** Deletes the endpoint with its deliveries and their attempts. */
  deleteEndpoint(accountId: string, id: string): Promise<boolean>;

  /**
   * Stores the event's bytes and one delivery per subscribed endpoint of the account in one
   * transaction (invariant 2): `pending` for enabled endpoints, `skipped` for disabled ones.
   * With `endpointId` (a test event), only that endpoint of the event's account, if it subscribes.
   */
  publish(event: EventRecord, deliveryIds: () => string, target?: PublishTarget): Promise<DeliveryRecord[]>;

  /** Leases up to `limit` due deliveries (invariants 3, 6). */
  claimDue(request: ClaimRequest): Promise<ClaimedDelivery[]>;
  /**
   * Records an attempt and its consequences if the lease token still matches (invariants 3, 4, 5).
   * A lease that expired but was not claimed by another worker still matches: nobody else has
   * sent the delivery, so the result is the truth.
   */
  recordAttempt(result: AttemptResult): Promise<AttemptApplied>;
  /** Gives a leased delivery back unattempted (graceful shutdown). */
  releaseLease(deliveryId: string, leaseToken: string): Promise<void>;
  /** The earliest time a claimable delivery is due, or null when none is waiting. */
  nextDueAt(): Promise<number | null>;
  /**
   * Cross-process wake-ups (PostgreSQL LISTEN/NOTIFY); returns the unsubscribe function. The
   * listener is also called once whenever listening (re)starts, since a publish made before then
   * sent no wake-up.
   */
  subscribe?(listener: () => void): () => void;

  /** Re-enables: counter reset, held deliveries resumed, skipped ones replayed if asked. */
  reenableEndpoint(
    accountId: string,
    id: string,
    options: { replaySkipped: boolean; now: number },
  ): Promise<Reenabled | null>;
  /** Schedules one delivery for an attempt now, whatever its state, unless its endpoint is disabled. */
  retryNow(accountId: string, deliveryId: string, now: number): Promise<RetryNowResult>;

  listDeliveries(accountId: string, filter: DeliveryFilter): Promise<Page<DeliveryRecord>>;
  getDelivery(
    accountId: string,
    id: string,
  ): Promise<{ delivery: DeliveryRecord; attempts: AttemptRecord[] } | null>;
  getEvent(accountId: string, id: string): Promise<EventRecord | null>;
  /** Retention: deletes final deliveries (delivered, failed, skipped) last updated before `cutoff`, and orphaned events. */
  pruneBefore(cutoff: number): Promise<number>;
  stats(): Promise<StoreStats>;
}
