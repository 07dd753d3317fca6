/**
 * Records → the API's JSON (snake_case, ISO times). An endpoint's secret is written only by the
 * routes that exist to show it (create, GET …/secret, rotate): never in lists or updates. A
 * rotation's previous secret is never written at all, only when it stops signing.
 */
import type { PublishResult } from '../engine/sender.js';
import type { Reenabled } from '../store/port.js';
import type { AttemptRecord, DeliveryRecord, EndpointRecord, EventRecord } from '../store/records.js';

const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

export function endpointJson(e: EndpointRecord) {
  return {
    id: e.id,
    url: e.url,
    events: e.events,
    description: e.description,
    standard_webhooks: e.standardWebhooks,
    previous_secret_expires_at: isoOrNull(e.previousSecretExpiresAt),
    enabled: e.enabled,
    consecutive_failures: e.consecutiveFailures,
    disabled_reason: e.disabledReason,
    disabled_at: isoOrNull(e.disabledAt),
    paused: e.paused,
    paused_at: isoOrNull(e.pausedAt),
    status: !e.enabled ? ('disabled' as const) : e.paused ? ('paused' as const) : ('active' as const),
    created_at: iso(e.createdAt),
    updated_at: iso(e.updatedAt),
  };
}

export function endpointWithSecretJson(e: EndpointRecord) {
  return { ...endpointJson(e), secret: e.secret };
}

export function secretJson(e: EndpointRecord) {
  return { secret: e.secret, previous_secret_expires_at: isoOrNull(e.previousSecretExpiresAt) };
}

export function deliveryJson(d: DeliveryRecord) {
  return {
    id: d.id,
    event_id: d.eventId,
    endpoint_id: d.endpointId,
    event: d.eventName,
    status: d.status,
    attempts: d.attempts,
    next_attempt_at: isoOrNull(d.nextAttemptAt),
    last_failure_kind: d.lastFailureKind,
    last_status_code: d.lastStatusCode,
    test: d.test,
    created_at: iso(d.createdAt),
    updated_at: iso(d.updatedAt),
  };
}

export function attemptJson(a: AttemptRecord) {
  return {
    number: a.number,
    started_at: iso(a.startedAt),
    duration_ms: a.durationMs,
    status_code: a.statusCode,
    failure_kind: a.failureKind,
    error_message: a.errorMessage,
    response_snippet: a.responseSnippet,
    next_attempt_at: isoOrNull(a.nextAttemptAt),
    request_headers: a.requestHeaders,
  };
}

export function deliveryDetailJson(
  delivery: DeliveryRecord,
  attempts: AttemptRecord[],
  event: EventRecord | null,
) {
  return {
    delivery: deliveryJson(delivery),
    request_body: event ? Buffer.from(event.body).toString('utf8') : '',
    attempts: attempts.map(attemptJson),
  };
}

export function publishResultJson(r: PublishResult) {
  return { event_id: r.eventId, deliveries: r.deliveries.map(deliveryJson) };
}

export function enableResultJson(r: Reenabled) {
  return { endpoint: endpointJson(r.endpoint), resumed: r.resumed, replayed: r.replayed };
}
