/** The records the stores keep (design D15, D16). Times are epoch milliseconds. */
import type { EventName } from '@linkhooks/protocol';
import type { DeliveryStatus, FailureKind } from '../domain/delivery-state.js';

/** design R1: webhooks are offered on the Business plan and above; the other plans exist to be refused. */
export const PLANS = ['free', 'pro', 'business', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export interface AccountRecord {
  id: string;
  name: string;
  plan: Plan;
  /** SHA-256 hex of the API key; the key itself is never stored. */
  apiKeyHash: string;
  createdAt: number;
}

export interface EndpointRecord {
  id: string;
  accountId: string;
  url: string;
  events: EventName[];
  secret: string;
  /**
   * The secret a rotation replaced, still signing until `previousSecretExpiresAt` (design D38);
   * never used at or after that time, and dropped once past it.
   */
  previousSecret: string | null;
  previousSecretExpiresAt: number | null;
  /** Every attempt also carries the Standard Webhooks headers (design D32). */
  standardWebhooks: boolean;
  description: string | null;
  enabled: boolean;
  consecutiveFailures: number;
  disabledReason: string | null;
  disabledAt: number | null;
  /** Paused by its account (design D34): deliveries are held, not attempted, until resumed. */
  paused: boolean;
  pausedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface EventRecord {
  id: string;
  accountId: string;
  name: string;
  /**
   * The exact bytes every attempt sends (design I1). At publish, a view of a buffer other events
   * share (design D64): a store copies the bytes it keeps rather than keeping the view.
   */
  body: Uint8Array;
  createdAt: number;
  /**
   * The platform's own id of the event (ingest's `event_id`), unique per account while the event
   * is kept: a publish that repeats it stores nothing (design D36).
   */
  idempotencyKey?: string | null;
  /** The data's `click_id` and `conversion_id`, kept beside the bytes so the log can be searched by them (design D47). */
  clickId?: string | null;
  conversionId?: string | null;
}

export interface DeliveryRecord {
  id: string;
  eventId: string;
  endpointId: string;
  accountId: string;
  eventName: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: number | null;
  lastFailureKind: FailureKind | null;
  lastStatusCode: number | null;
  /** A test delivery (`POST /v1/endpoints/:id/test`): marked on the wire and in the log (design D42). */
  test: boolean;
  createdAt: number;
  updatedAt: number;
}

export interface AttemptRecord {
  deliveryId: string;
  /** 1..6 on the retry schedule; retries by hand continue the count. */
  number: number;
  startedAt: number;
  durationMs: number;
  statusCode: number | null;
  failureKind: FailureKind | null;
  errorMessage: string | null;
  /** At most 4 KiB of the response body, as text. */
  responseSnippet: string | null;
  /** When the next attempt is due, as decided after this one; null when final. */
  nextAttemptAt: number | null;
  /** The exact request headers sent (signature included; the secret never is). */
  requestHeaders: Record<string, string>;
}

/** A delivery handed to one worker under a lease (design I3). */
export interface ClaimedDelivery {
  delivery: DeliveryRecord;
  leaseToken: string;
  leaseExpiresAt: number;
  /** The event's body, shared by the claim's deliveries of that event: read it, never write or transfer it. */
  body: Uint8Array;
  url: string;
  /** The URL's scheme, host and port: what the endpoints of one server share (design D25). */
  origin: string;
  secret: string;
  /** Handed out only while valid at the claim's time (previousSecretSql, design D38). */
  previousSecret: string | null;
  previousSecretExpiresAt: number | null;
  standardWebhooks: boolean;
}

/** An API key of an account (design D37): never the key itself, only its hash and its first characters. */
export interface ApiKeyRecord {
  id: string;
  accountId: string;
  /** The key's first characters (`lhk_` and 8 more), to recognise it; null for keys made before they were kept. */
  prefix: string | null;
  createdAt: number;
  /** When it last signed a request in, to the minute; null if never. */
  lastUsedAt: number | null;
  /** When it stops working (the grace after a rotation); null if it does not. */
  expiresAt: number | null;
  revokedAt: number | null;
}
