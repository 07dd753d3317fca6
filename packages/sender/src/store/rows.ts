/** Row ↔ record mapping shared by the SQL stores (SQLite and PostgreSQL). */
import type { EventName } from '@linkhooks/protocol';
import type { DeliveryStatus, FailureKind } from '../domain/delivery-state.js';
import type { AccountRecord, AttemptRecord, DeliveryRecord, EndpointRecord, Plan } from './records.js';

export type Row = Record<string, unknown>;

const num = (v: unknown): number => (typeof v === 'string' ? Number(v) : (v as number));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));

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
    description: (row.description as string | null) ?? null,
    enabled: row.enabled === true || row.enabled === 1,
    consecutiveFailures: num(row.consecutive_failures),
    disabledReason: (row.disabled_reason as string | null) ?? null,
    disabledAt: numOrNull(row.disabled_at),
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
    createdAt: num(row.created_at),
    updatedAt: num(row.updated_at),
  };
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

export function attemptParams(a: AttemptRecord) {
  return {
    deliveryId: a.deliveryId,
    number: a.number,
    startedAt: a.startedAt,
    durationMs: a.durationMs,
    statusCode: a.statusCode,
    failureKind: a.failureKind,
    errorMessage: a.errorMessage,
    responseSnippet: a.responseSnippet,
    nextAttemptAt: a.nextAttemptAt,
    requestHeaders: JSON.stringify(a.requestHeaders),
  };
}
