/** Row ↔ record mapping, written once for both stores (SQLite and PostgreSQL). */
import type { EventName } from '@linkhooks/protocol';
import {
  type DeliveryStatus,
  type FailureKind,
  QUEUED_STATUSES,
  type QueuedStatus,
} from '../domain/delivery-state.js';
import { SenderError } from '../errors.js';
import { ownBytes } from '../own-bytes.js';
import type {
  AccountRecord,
  ApiKeyRecord,
  AttemptRecord,
  ClaimedDelivery,
  DeliveryRecord,
  EndpointRecord,
  EventRecord,
  Plan,
} from './records.js';

export type Row = Record<string, unknown>;

const num = (v: unknown): number => (typeof v === 'string' ? Number(v) : (v as number));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));
const bool = (v: unknown): boolean => v === true || v === 1;

export function toAccount(row: Row): AccountRecord {
  return {
    id: row.id as string,
    name: row.name as string,
    plan: row.plan as Plan,
    apiKeyHash: row.api_key_hash as string,
    createdAt: num(row.created_at),
  };
}

export function toEndpoint(row: Row): EndpointRecord {
  return {
    id: row.id as string,
    accountId: row.account_id as string,
    url: row.url as string,
    events: (typeof row.events === 'string' ? JSON.parse(row.events) : row.events) as EventName[],
    secret: row.secret as string,
    previousSecret: (row.previous_secret as string | null) ?? null,
    previousSecretExpiresAt: numOrNull(row.previous_secret_expires_at),
    standardWebhooks: bool(row.standard_webhooks),
    description: (row.description as string | null) ?? null,
    enabled: bool(row.enabled),
    consecutiveFailures: num(row.consecutive_failures),
    disabledReason: (row.disabled_reason as string | null) ?? null,
    disabledAt: numOrNull(row.disabled_at),
    paused: row.paused === true || row.paused === 1,
    pausedAt: numOrNull(row.paused_at),
    createdAt: num(row.created_at),
    updatedAt: num(row.updated_at),
  };
}

export function toDelivery(row: Row): DeliveryRecord {
  return {
    id: row.id as string,
    eventId: row.event_id as string,
    endpointId: row.endpoint_id as string,
    accountId: row.account_id as string,
    eventName: row.event_name as string,
    status: row.status as DeliveryStatus,
    attempts: num(row.attempts),
    nextAttemptAt: numOrNull(row.next_attempt_at),
    lastFailureKind: (row.last_failure_kind as FailureKind | null) ?? null,
    lastStatusCode: numOrNull(row.last_status_code),
    test: bool(row.test),
    createdAt: num(row.created_at),
    updatedAt: num(row.updated_at),
  };
}

/**
 * A column of bytes as bytes. SQLite keeps a value as the statement gave it: a publish writes bytes,
 * but SQL written by hand writes a string literal as text, which is read as its UTF-8 bytes (as a
 * view it would read as nothing, and `ownBytes` would fail every claim that picked its delivery).
 */
const bytesOf = (value: unknown): Uint8Array =>
  typeof value === 'string' ? Buffer.from(value, 'utf8') : (value as Uint8Array);

export function toEvent(row: Row): EventRecord {
  return {
    id: row.id as string,
    accountId: row.account_id as string,
    name: row.name as string,
    body: new Uint8Array(bytesOf(row.body)),
    createdAt: num(row.created_at),
    idempotencyKey: (row.idempotency_key as string | null | undefined) ?? null,
  };
}

export function toApiKey(row: Row): ApiKeyRecord {
  return {
    id: row.id as string,
    accountId: row.account_id as string,
    prefix: (row.prefix as string | null) ?? null,
    createdAt: num(row.created_at),
    lastUsedAt: numOrNull(row.last_used_at),
    expiresAt: numOrNull(row.expires_at),
    revokedAt: numOrNull(row.revoked_at),
  };
}

/** A lease's token and expiry. */
type Lease = [token: string, expiresAt: number];

/** The lease a claim's row carries in `lease_token` and `lease_expires_at` (PostgreSQL's claims). */
export const leaseOfRow = (row: Row): Lease => [row.lease_token as string, Number(row.lease_expires_at)];

/**
 * Each event's body (`event_id`, `body`) from the rows that carry one, in a buffer of its own
 * (ownBytes): the driver's when the body fills it, a copy of a small body's slice of a pool.
 */
export function bodiesOf(rows: Row[]): Map<string, Uint8Array> {
  const bodies = new Map<string, Uint8Array>();
  for (const row of rows) {
    const eventId = row.event_id as string;
    if (row.body != null && !bodies.has(eventId)) bodies.set(eventId, ownBytes(bytesOf(row.body)));
  }
  return bodies;
}

/**
 * A claim's rows as its deliveries, in order. Each row is a delivery's columns with `url`,
 * `origin`, `secret`, `previous_secret` (already null unless valid), its expiry and
 * `standard_webhooks` joined in (attemptColumnsSql). `lease` is every row's lease, where one claim
 * leased them all at once (SQLite's), or reads each row's own. `bodies` holds each event's body
 * (bodiesOf, design D72): the deliveries of one event share that buffer, never written to, so the
 * delivery thread is also posted one copy of it per batch of requests.
 */
export function toClaimed(
  rows: Row[],
  lease: Lease | ((row: Row) => Lease),
  bodies: Map<string, Uint8Array>,
): ClaimedDelivery[] {
  return rows.map((row) => {
    const [leaseToken, leaseExpiresAt] = typeof lease === 'function' ? lease(row) : lease;
    const body = bodies.get(row.event_id as string);
    if (!body)
      throw new SenderError('internal', `the claim read no body for the event of delivery ${row.id}`);
    return {
      delivery: toDelivery(row),
      leaseToken,
      leaseExpiresAt,
      body,
      url: row.url as string,
      origin: row.origin as string,
      secret: row.secret as string,
      previousSecret: (row.previous_secret as string | null) ?? null,
      previousSecretExpiresAt: numOrNull(row.previous_secret_expires_at),
      standardWebhooks: bool(row.standard_webhooks),
    };
  });
}

export function toAttempt(row: Row): AttemptRecord {
  return {
    deliveryId: row.delivery_id as string,
    number: num(row.number),
    startedAt: num(row.started_at),
    durationMs: num(row.duration_ms),
    statusCode: numOrNull(row.status_code),
    failureKind: (row.failure_kind as FailureKind | null) ?? null,
    errorMessage: (row.error_message as string | null) ?? null,
    responseSnippet: (row.response_snippet as string | null) ?? null,
    nextAttemptAt: numOrNull(row.next_attempt_at),
    requestHeaders: (typeof row.request_headers === 'string'
      ? JSON.parse(row.request_headers)
      : row.request_headers) as Record<string, string>,
  };
}

/**
 * An attempt's columns in table order, for positional parameters, with the next attempt's time the
 * record decided, and `deliveryId` in place of the attempt's own where the store says whose it is.
 */
export function attemptValues(
  a: Omit<AttemptRecord, 'nextAttemptAt'>,
  nextAttemptAt: number | null,
  deliveryId = a.deliveryId,
): unknown[] {
  return [
    deliveryId,
    a.number,
    a.startedAt,
    a.durationMs,
    a.statusCode,
    a.failureKind,
    a.errorMessage,
    a.responseSnippet,
    nextAttemptAt,
    JSON.stringify(a.requestHeaders),
  ];
}

/** One page of the delivery log from `limit + 1` rows: the extra row says whether a next page exists. */
export function toPage(rows: Row[], limit: number): { items: DeliveryRecord[]; nextCursor: string | null } {
  const items = rows.slice(0, limit).map(toDelivery);
  return { items, nextCursor: rows.length > limit ? items[items.length - 1]!.id : null };
}

/** Counts by queued status from `(status, n)` rows, every queued status present. */
export function toStats(
  rows: Row[],
  disabledEndpoints: unknown,
): { queued: Record<QueuedStatus, number>; disabledEndpoints: number } {
  const queued = Object.fromEntries(QUEUED_STATUSES.map((s) => [s, 0])) as Record<QueuedStatus, number>;
  for (const r of rows) queued[r.status as QueuedStatus] = num(r.n);
  return { queued, disabledEndpoints: num(disabledEndpoints ?? 0) };
}

/** The columns of an account joined beside a key's, as `a_<column>`. */
export const ACCOUNT_COLUMNS_AS_A =
  'a.id AS a_id, a.name AS a_name, a.plan AS a_plan, a.api_key_hash AS a_api_key_hash, a.created_at AS a_created_at';

/** A key's row with its account's columns beside it (ACCOUNT_COLUMNS_AS_A). */
export function toKeyHolder(row: Row): { account: AccountRecord; key: ApiKeyRecord } {
  const account = Object.fromEntries(
    Object.entries(row)
      .filter(([k]) => k.startsWith('a_'))
      .map(([k, v]) => [k.slice(2), v]),
  );
  return { account: toAccount(account), key: toApiKey(row) };
}
