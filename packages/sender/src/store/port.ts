/**
 * The store port (design C3): the delivery queue and the catalogue, implemented by the SQLite and
 * PostgreSQL stores, with one conformance battery (test/helpers/store-battery.ts) run against
 * each. Every method that changes several rows does so in one transaction (design I1 to I6).
 */
import type { DeliveryStatus, QueuedStatus } from '../domain/delivery-state.js';
import type { NoticeRules } from '../domain/notice-rules.js';
import type { QueueMoved } from '../domain/queue-moves.js';
import type { TransitionRules } from '../domain/transition.js';
import type { AccountCatalogue } from './account-port.js';
import type { MigrationReport } from './migration-plan.js';
import type { NoticeOutbox } from './notice-port.js';
import type { PortalTokens } from './portal-token-port.js';
import type {
  AttemptRecord,
  ClaimedDelivery,
  DeliveryRecord,
  EndpointRecord,
  EventRecord,
} from './records.js';
import type { SecretsAtRest } from './secrets-port.js';
import type { EndpointStatistics } from './stats-port.js';

export type NewEndpoint = Pick<
  EndpointRecord,
  'id' | 'accountId' | 'url' | 'events' | 'secret' | 'description'
> & {
  now: number;
  /** Default false. */
  standardWebhooks?: boolean;
};

/** An endpoint named by its account and id. */
export interface EndpointRef {
  readonly accountId: string;
  readonly id: string;
}

export interface EndpointPatch {
  url?: string;
  events?: EndpointRecord['events'];
  /**
   * A new secret. The one it replaces becomes the previous secret until `previousSecretExpiresAt`
   * (design D38), in the same statement, as stored (so still encrypted); without an expiry it is
   * dropped at once, and so is any earlier previous secret.
   */
  secret?: string;
  /** With `secret` only: when the replaced secret stops signing; null or absent, at once. */
  previousSecretExpiresAt?: number | null;
  description?: string | null;
  standardWebhooks?: boolean;
}

export interface PublishTarget {
  endpointId?: string;
  /** A test delivery (design D42): marked on the wire and in the log. */
  test?: boolean;
}

export interface ClaimRequest {
  now: number;
  limit: number;
  /** How long a lease holds unless renewed (design I3). */
  leaseMs: number;
  /** Deliveries one endpoint may have in flight; endpoints at the cap are skipped (design I6). */
  perEndpointCap: number;
  /**
   * Leases the caller holds whose request is over and whose attempt is being recorded: no longer
   * in flight to their endpoint, so they do not count against its cap. Their leases still hold
   * (they end with the record), so none of them is claimed again. A lease, not a delivery id: once
   * a lease has expired and another worker holds the delivery, its live lease still counts.
   */
  finishing?: readonly LeaseRef[];
  /** This claimer's shares (design D25); without them, only the endpoint cap applies. */
  shares?: ClaimShares;
}

/**
 * A claim that takes the accounts in turn rather than the due rows in due order (design D77): the
 * earliest due delivery of each account with something due, then the second of each, and so on,
 * read from each endpoint's own due deliveries as a held-up claim reads them, a few of each
 * account's (turnEndpoints). The worker asks for one every ACCOUNTS_TURN_MS or less often when they
 * cost more, and at most ACCOUNTS_TURN_MAX_MS apart: one account's backlog holds another's next
 * delivery about that long.
 */
export interface TurnRequest extends ClaimRequest {
  /**
   * The turn's cursor: the turn takes the accounts whose id comes after it, then from the first id
   * on, as many as `limit`, and each round of theirs in that order. The worker passes the cursor
   * its turn before answered (ClaimedTurn's `next`), so that over turns every account with
   * something due takes one, however many more than a turn's worth have a backlog due before
   * another's, and whatever origin's share cuts a turn short.
   */
  after: string;
}

/** What a turn leased, and where the next one starts. */
export interface ClaimedTurn {
  claimed: ClaimedDelivery[];
  /**
   * The next turn's cursor (turnCursor): after the last account this one took, or no further than
   * the last it took at an origin it left at its share; `after` itself when it took none and read
   * nothing past it. Besides the endpoints due first, a turn
   * reads the endpoints after its cursor in account-id order, up to a walk of them: when that read
   * stopped at its bound before the last account and the turn chose every account it found past
   * the cursor, the cursor goes to where it stopped (turnReadTo), rather than back to an account
   * from the first id on, since the accounts after it were not read.
   */
  next: string;
}

/** A claim of the probes of endpoints whose circuit breaker is half-open (design D27). */
export interface ProbeRequest {
  now: number;
  leaseMs: number;
  endpointIds: readonly string[];
}

/**
 * What one claimer lets one account, one origin and one account at an origin hold of its slots
 * (design D25), and the requests it has open now by each. Deliveries of an account, an origin or
 * an account at an origin at its share are passed over, as an endpoint at its cap is.
 */
export interface ClaimShares {
  perAccount: number;
  /**
   * One origin's most, where `capped.origins` holds no cap of its own for it: the worker passes
   * less than the configured share (worker/origin-shares.ts), and a cap there may be higher.
   */
  perOrigin: number;
  /**
   * Of an origin's share, the most one account's requests there may hold, where
   * `capped.accountsAtOrigins` holds no cap of its own for it.
   */
  perAccountAtOrigin: number;
  openByAccount: ReadonlyMap<string, number>;
  openByOrigin: ReadonlyMap<string, number>;
  /** Keyed by accountAtOrigin. */
  openByAccountAtOrigin: ReadonlyMap<string, number>;
  /**
   * Caps in place of the claim's `perEndpointCap` by endpoint id, of `perOrigin` by origin, and of
   * `perAccountAtOrigin` by account at an origin (keyed as `openByAccountAtOrigin`), each higher or
   * lower than what it replaces: the circuit
   * breaker's (design D27), 0 while open (none claimed), 1 while half-open (one probe at a time),
   * and the worker's division of an origin's share among the accounts there
   * (worker/origin-shares.ts). The worker gives an endpoint half-open 0 here and claims its probe
   * apart (claimProbes).
   */
  capped?: {
    endpoints: ReadonlyMap<string, number>;
    origins?: ReadonlyMap<string, number>;
    accountsAtOrigins: ReadonlyMap<string, number>;
  };
}

/** One lease: the delivery and the token it was claimed with. */
export interface LeaseRef {
  deliveryId: string;
  leaseToken: string;
}

/** An attempt to record under its lease (design I3, I4, I5). */
export interface AttemptResult {
  lease: LeaseRef;
  /** The attempt as made; its `nextAttemptAt` is what the store decides (decideTransition). */
  attempt: Omit<AttemptRecord, 'nextAttemptAt'>;
  /** The schedule and the disable policy the engine runs with. */
  rules: TransitionRules;
  /** When the attempt finished: the retry delay counts from here (design R12). */
  now: number;
  /** The receiver's `Retry-After` header, if it sent one (design D40). */
  retryAfter?: string | null;
}

export interface AttemptApplied {
  /** False when the lease was lost: another worker owns the delivery now (design I3). */
  applied: boolean;
  /** The delivery's status after the attempt (`held` if its endpoint is disabled). */
  status?: DeliveryStatus;
  /** When the next attempt is due, as decided; null once final. */
  nextAttemptAt?: number | null;
  /** Set when this attempt disabled the endpoint (design I5). */
  disabledEndpoint?: EndpointRecord;
  /**
   * The endpoint's failures in a row as this attempt left them, set when it raised them (a
   * delivery failed for good; any failed attempt when counting per attempt): read with the
   * record, where a later read could already see the next attempts' counts.
   */
  endpointFailures?: number;
  /** An operator notice was written with the attempt (design D50). */
  noticed?: boolean;
}

export interface DeliveryFilter {
  endpointId?: string;
  status?: DeliveryStatus;
  event?: string;
  /** An event id (ours or the platform's), a `click_id` or a `conversion_id`: exact match (design D47). */
  search?: string;
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
  | { ok: false; reason: 'not_found' | 'endpoint_disabled' | 'endpoint_paused' | 'in_flight' };

/** What a publish stored, or, for a repeated idempotency key, what the first one did (design D36). */
export interface Published {
  eventId: string;
  deliveries: DeliveryRecord[];
  /** True when the key was seen before: nothing was stored, and this is the first publish's event. */
  duplicate: boolean;
}

export interface Resumed {
  endpoint: EndpointRecord;
  /** Held deliveries made claimable again. */
  resumed: number;
}

/**
 * A change of an endpoint's flags as the store answers it: the first step of its deliveries moved
 * with it, and `settling` when more are left for settleQueueStep (design D34).
 */
export interface Settling {
  settling: boolean;
}

/** Which failed deliveries to recover (design D35): created in [since, until), at most `limit`. */
export interface RecoverRequest {
  since: number;
  until: number;
  limit: number;
  now: number;
}

export type RecoverResult =
  | { ok: true; recovered: number }
  | { ok: false; reason: 'not_found' | 'endpoint_disabled' | 'endpoint_paused' };

/** Which failed deliveries are left to recover (design D35): created in [since, until), counted up to `atMost`. */
export interface FailedRange {
  since: number;
  until: number;
  atMost: number;
}

export interface Reenabled {
  endpoint: EndpointRecord;
  resumed: number;
  replayed: number;
  /** With `notices`: an `endpoint.enabled` notice was written, since the endpoint was disabled (design D50). */
  noticed?: boolean;
}

export interface StoreStats {
  /** Deliveries waiting, by status: what is due now or later, and what is held. */
  queued: Record<QueuedStatus, number>;
  disabledEndpoints: number;
}

/**
 * The delivery queue: what publishing and the workers need. Every method keeps the invariants
 * design I1 to I6 in one transaction of its own.
 */
export interface DeliveryQueue {
  /**
   * Stores the event's bytes and one delivery per subscribed endpoint of the account in one
   * transaction (design I2): `pending` for enabled endpoints, `skipped` for disabled ones.
   * With `endpointId` (a test event), only that endpoint of the event's account, if it subscribes.
   * Publishes that arrive together may be written together (group commit); none resolves before
   * its commit. `deliveryIds` makes ids in the process; a store that writes in one statement may
   * make them in SQL instead, in the same form. Either way a delivery's id starts with its event's
   * creation time (`idsFrom('dlv', event.createdAt)`): statistics count deliveries by it (design D45).
   *
   * An event with an `idempotencyKey` (design D36): the account's unique index on the key decides,
   * in the same transaction, whether this is the first publish of it. A repeat stores nothing and
   * answers the first one's event id and its deliveries as they are now, with `duplicate` set.
   */
  publish(event: EventRecord, deliveryIds: () => string, target?: PublishTarget): Promise<Published>;
  /**
   * How many commits have held publishes in this process since the store opened: every commit a
   * publish took part in, whatever it stored (a repeated idempotency key's among them). Publishes
   * that arrive together share one (group commit), so the events published over this is the
   * groups' size.
   */
  publishCommits(): number;
  /** Leases up to `limit` due deliveries (design I3, I6). */
  claimDue(request: ClaimRequest): Promise<ClaimedDelivery[]>;
  /** Leases up to `limit` due deliveries with the accounts in turn (design D77), as claimDue does. */
  claimTurn(request: TurnRequest): Promise<ClaimedTurn>;
  /**
   * Leases the probe of each endpoint named that is enabled and has no delivery in flight: its
   * earliest due retry, or else its earliest due new delivery (PROBE_ORDER, design D27). An
   * endpoint with neither gives nothing.
   */
  claimProbes(request: ProbeRequest): Promise<ClaimedDelivery[]>;
  /**
   * Records an attempt and what decideTransition makes of it, if the lease token still matches
   * (design I3, I4, I5). A lease that expired but was not claimed by another worker still
   * matches: nobody else has sent the delivery, so the result is the truth.
   */
  recordAttempt(result: AttemptResult): Promise<AttemptApplied>;
  /** Gives a leased delivery back unattempted (graceful shutdown, a breaker's hold-back, a request given back unsent). */
  releaseLease(deliveryId: string, leaseToken: string): Promise<void>;
  /**
   * Extends the caller's leases to `expiresAt` (the worker's heartbeat, design I3) and answers
   * those it still holds: a lease that was recorded, released or taken over is not renewed.
   */
  renewLeases(leases: readonly LeaseRef[], expiresAt: number): Promise<LeaseRef[]>;
  /** The earliest time a claimable delivery is due, or null when none is waiting. */
  nextDueAt(): Promise<number | null>;
  /**
   * Wake-ups from other processes (with `capabilities.sharedAcrossProcesses`); returns the
   * unsubscribe function. The listener is also called once whenever listening (re)starts, since a
   * publish made before then sent no wake-up.
   */
  subscribe?(listener: () => void): () => void;
}

/** The catalogue: accounts, endpoints, the delivery log, retention and counts. */
export interface Catalogue extends AccountCatalogue {
  /**
   * `admit`, given how many endpoints the account holds, throws to refuse one more: it is called
   * where no other creation for the account can run between the count and the insert, so parallel
   * requests cannot all pass a quota that only one of them fits.
   */
  createEndpoint(input: NewEndpoint, admit?: (existing: number) => void): Promise<EndpointRecord>;
  /** Scoped: another account's endpoint is `null`, as if it did not exist (tenant isolation). */
  getEndpoint(accountId: string, id: string): Promise<EndpointRecord | null>;
  listEndpoints(accountId: string): Promise<EndpointRecord[]>;
  updateEndpoint(
    accountId: string,
    id: string,
    patch: EndpointPatch,
    now: number,
  ): Promise<EndpointRecord | null>;
  /**
   * The first step of deleting an endpoint (design D78): disabled, and gone for every read of
   * endpoints (fan-out included) from now on; its deliveries stay until deleteEndpointStep takes
   * them. True when the account has the endpoint, marked before or not.
   */
  markEndpointDeleted(accountId: string, id: string, now: number): Promise<boolean>;
  /**
   * One bounded step of deleting a marked endpoint: up to `limit` of its deliveries, with their
   * attempts and leases. Answers how many went; 0 once none is left (or the endpoint is not marked).
   */
  deleteEndpointStep(accountId: string, id: string, limit: number): Promise<number>;
  /**
   * Deletes the endpoint with any deliveries it has left and their attempts, in one transaction:
   * the last step of a deletion, once deleteEndpointStep has taken them all.
   */
  deleteEndpoint(accountId: string, id: string): Promise<boolean>;
  /** Up to `limit` marked endpoints, whose deletion was cut short or is under way. */
  endpointsBeingDeleted(limit: number): Promise<EndpointRef[]>;
  /**
   * Re-enables: counter reset, held deliveries resumed, skipped ones replayed if asked (design D2).
   * The first step of them moves with the change, the rest by settleQueueStep (`settling`).
   */
  reenableEndpoint(
    accountId: string,
    id: string,
    options: { replaySkipped: boolean; now: number; notices?: NoticeRules | undefined },
  ): Promise<(Reenabled & Settling) | null>;
  /**
   * Pauses the endpoint (design D34): its claimable deliveries are held, the first step of them in
   * the same transaction and the rest by settleQueueStep, and new ones are made held. Pausing a
   * paused endpoint changes nothing.
   */
  pauseEndpoint(accountId: string, id: string, now: number): Promise<EndpointRecord | null>;
  /**
   * Resumes it: its held deliveries are claimable again at their own due times, unless it is
   * disabled; the first step of them with the change, the rest by settleQueueStep (`settling`).
   */
  resumeEndpoint(accountId: string, id: string, now: number): Promise<(Resumed & Settling) | null>;
  /**
   * One bounded step of moving the endpoint's deliveries toward its flags (queueMoves), when a change
   * of them (a pause, a resume, a re-enabling, a disabling) left some: at most `limit` moved. `done`
   * once none is left, the endpoint off the list of those settling.
   */
  settleQueueStep(id: string, limit: number, now: number): Promise<QueueMoved & { done: boolean }>;
  /** Up to `limit` endpoints whose deliveries are being moved, or were when a process stopped. */
  endpointsSettling(limit: number): Promise<EndpointRef[]>;
  /** Schedules the endpoint's failed deliveries in a time range for one more attempt each (design D35). */
  recoverDeliveries(accountId: string, endpointId: string, request: RecoverRequest): Promise<RecoverResult>;
  /**
   * How many of the endpoint's failed deliveries in a range are left to recover (design D35),
   * counted no further than `atMost`, so that a count costs as much at a million as at `atMost`.
   */
  countFailedDeliveries(endpointId: string, range: FailedRange): Promise<number>;
  /** Schedules one delivery for an attempt now, whatever its state, unless its endpoint is disabled or paused. */
  retryNow(accountId: string, deliveryId: string, now: number): Promise<RetryNowResult>;

  listDeliveries(accountId: string, filter: DeliveryFilter): Promise<Page<DeliveryRecord>>;
  getDelivery(
    accountId: string,
    id: string,
  ): Promise<{ delivery: DeliveryRecord; attempts: AttemptRecord[] } | null>;
  getEvent(accountId: string, id: string): Promise<EventRecord | null>;
  /** Retention: deletes final deliveries last updated before `cutoff`, and events left without any. */
  pruneBefore(cutoff: number): Promise<number>;
  /** Drops the previous secrets whose grace ended at or before `now` (design D38); resolves with how many. */
  dropExpiredSecrets(now: number): Promise<number>;
  stats(): Promise<StoreStats>;
}

export type { AccountCatalogue, KeyHolder, NewAccount, NewApiKey } from './account-port.js';
export type { ClaimedNotice, NoticeOutbox, NoticeOutcome } from './notice-port.js';
export type { NewPortalToken, PortalTokens, TakenPortalToken } from './portal-token-port.js';
export type { SecretChange, SecretsAtRest } from './secrets-port.js';
export type { EndpointStatistics, StatsWindow, WindowStats } from './stats-port.js';

/** What a store can do beyond the port, declared rather than guessed from its kind. */
export interface StoreCapabilities {
  /**
   * Several processes share the store (each with its own workers), and `subscribe` carries their
   * wake-ups.
   */
  sharedAcrossProcesses: boolean;
  /**
   * A write is a network round trip, not a commit on this process's thread: a worker frees an
   * attempt's slot at the response and records beside the next request, rather than holding the
   * slot through it; the batch route publishes every slice of a batch at once, not two at a time;
   * the service sends deliveries from its event loop, not from a thread of their own.
   */
  recordsOverNetwork: boolean;
  /**
   * The connections the store pools to its database, for a store whose work waits for one: the
   * engine's steps and its costly reads each hold a share of them (limits/pool-shares.ts), two
   * fifths and one fifth, at least one each. Undefined for a store that pools none.
   */
  connections?: number;
}

/** A store: the queue and the catalogue over one database. */
export interface SenderStore
  extends DeliveryQueue,
    Catalogue,
    SecretsAtRest,
    EndpointStatistics,
    NoticeOutbox,
    PortalTokens {
  readonly capabilities: StoreCapabilities;
  /**
   * Applies the migrations the database lacks (safe from several processes at once). The built-in
   * stores tell what they applied and what the database holds; a store of one's own may tell nothing.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a store of one's own whose migrate returns nothing still fits
  migrate(): Promise<MigrationReport | undefined | void>;
  close(): Promise<void>;
}
