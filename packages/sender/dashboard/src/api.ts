import { DELIVERY_STATUSES, FINAL_STATUSES as FINAL } from '../../src/domain/delivery-state.js';
import type { StatsBucketName } from '../../src/domain/stats-buckets.js';
import { apiErrorMessage } from './messages.js';

/**
 * The dashboard's data fetching: the management API, signed in by the session cookie (never the
 * API key, which is sent once to POST /v1/session). Requests that change state carry the CSRF
 * header the service requires of cookie-signed requests.
 */
export interface Endpoint {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  standard_webhooks: boolean;
  previous_secret_expires_at: string | null;
  enabled: boolean;
  consecutive_failures: number;
  disabled_reason: string | null;
  disabled_at: string | null;
  paused: boolean;
  paused_at: string | null;
  status: 'active' | 'paused' | 'disabled';
  created_at: string;
}

export interface Delivery {
  id: string;
  event_id: string;
  endpoint_id: string;
  event: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  last_failure_kind: string | null;
  last_status_code: number | null;
  test: boolean;
  created_at: string;
  updated_at: string;
}

export interface Attempt {
  number: number;
  started_at: string;
  duration_ms: number;
  status_code: number | null;
  failure_kind: string | null;
  error_message: string | null;
  response_snippet: string | null;
  next_attempt_at: string | null;
  request_headers: Record<string, string>;
}

/** GET /v1/endpoints/:id/stats (design D45). */
export interface EndpointStats {
  window: string;
  since: string;
  until: string;
  bucket: StatsBucketName;
  deliveries: Record<string, number>;
  attempts: { total: number; succeeded: number; failed: number };
  success_rate: number | null;
  latency_ms: { p50: number | null; p95: number | null };
  last_success_at: string | null;
  last_failure_at: string | null;
  buckets: {
    start: string;
    succeeded: number;
    failed: number;
    latency_ms: { mean: number | null; max: number | null };
  }[];
}

export interface EndpointInput {
  url: string;
  events: string[];
  description?: string | null;
  standard_webhooks?: boolean;
}

/** A secret as the API shows it, with when a rotation's previous one stops signing. */
export interface SecretState {
  secret: string;
  previous_secret_expires_at: string | null;
}

export interface DeliveryDetail {
  delivery: Delivery;
  request_body: string;
  attempts: Attempt[];
}

/**
 * An API error, its message in plain words (messages.ts); `detail` keeps the service's own, and
 * `retryAfterSeconds` its `Retry-After`, where it sent one.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    details?: unknown,
    readonly retryAfterSeconds?: number,
  ) {
    super(apiErrorMessage(code, details, detail, retryAfterSeconds));
  }
}

/** `Retry-After` in seconds; a date or nothing (the service sends neither) reads as none. */
const retryAfterOf = (response: Response) => {
  const value = response.headers.get('retry-after');
  return value !== null && /^\d+$/.test(value.trim()) ? Number(value) : undefined;
};

/** Told when a request answers 401 outside the sign-in: the session ended (its key was revoked). */
const signedOutListeners = new Set<() => void>();
export function onSignedOut(listener: () => void): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: {
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(method === 'GET' ? {} : { 'x-linkhooks-csrf': '1' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (response.status === 204) return undefined as T;
  const json = (await response.json().catch(() => ({}))) as {
    error?: { code: string; message: string; details?: unknown };
  };
  if (!response.ok) {
    // A wrong key at the sign-in is the form's to say; anywhere else the session is over.
    if (response.status === 401 && path !== '/v1/session')
      for (const listener of signedOutListeners) listener();
    throw new ApiError(
      response.status,
      json.error?.code ?? 'internal',
      json.error?.message ?? response.statusText,
      json.error?.details,
      retryAfterOf(response),
    );
  }
  return json as T;
}

export type DeliveryQuery = {
  endpointId?: string;
  status?: string;
  event?: string;
  q?: string;
  cursor?: string;
  limit?: number;
};

export const api = {
  signIn: (apiKey: string) =>
    call<{ account: { id: string; name: string } }>('POST', '/v1/session', { api_key: apiKey }),
  session: () => call<{ account: { id: string; name: string } }>('GET', '/v1/session'),
  signOut: () => call<void>('DELETE', '/v1/session'),
  endpoints: () => call<{ data: Endpoint[] }>('GET', '/v1/endpoints').then((r) => r.data),
  endpoint: (id: string) => call<Endpoint>('GET', `/v1/endpoints/${id}`),
  pause: (id: string) => call<Endpoint>('POST', `/v1/endpoints/${id}/pause`),
  resume: (id: string) => call<Endpoint>('POST', `/v1/endpoints/${id}/resume`),
  recover: (id: string, range: { since: string; until?: string }) =>
    call<{ recovered: number; remaining: number }>('POST', `/v1/endpoints/${id}/recover`, range),
  stats: (id: string, window: string) =>
    call<EndpointStats>('GET', `/v1/endpoints/${id}/stats?window=${encodeURIComponent(window)}`),
  createEndpoint: (input: EndpointInput) =>
    call<Endpoint & { secret: string }>('POST', '/v1/endpoints', input),
  updateEndpoint: (id: string, patch: Partial<EndpointInput>) =>
    call<Endpoint>('PATCH', `/v1/endpoints/${id}`, patch),
  deleteEndpoint: (id: string) => call<void>('DELETE', `/v1/endpoints/${id}`),
  secret: (id: string) => call<{ secret: string }>('GET', `/v1/endpoints/${id}/secret`).then((r) => r.secret),
  rotateSecret: (id: string, gracePeriodSeconds: number) =>
    call<SecretState>('POST', `/v1/endpoints/${id}/secret/rotate`, {
      grace_period_seconds: gracePeriodSeconds,
    }),
  sendTest: (id: string) => call<{ event_id: string }>('POST', `/v1/endpoints/${id}/test`, {}),
  enable: (id: string, replaySkipped: boolean) =>
    call<{ endpoint: Endpoint; resumed: number; replayed: number }>('POST', `/v1/endpoints/${id}/enable`, {
      replay_skipped: replaySkipped,
    }),
  deliveries: (q: DeliveryQuery) => {
    const params = new URLSearchParams();
    if (q.endpointId) params.set('endpoint_id', q.endpointId);
    if (q.status) params.set('status', q.status);
    if (q.event) params.set('event', q.event);
    if (q.q) params.set('q', q.q);
    if (q.cursor) params.set('cursor', q.cursor);
    params.set('limit', String(q.limit ?? 20));
    return call<{ data: Delivery[]; next_cursor: string | null }>('GET', `/v1/deliveries?${params}`);
  },
  delivery: (id: string) => call<DeliveryDetail>('GET', `/v1/deliveries/${id}`),
  retry: (id: string) => call<Delivery>('POST', `/v1/deliveries/${id}/retry`),
  receiver: () => call<{ url: string; mode: string; modes: string[] }>('GET', '/reference/receiver'),
  setReceiverMode: (mode: string) => call<{ mode: string }>('POST', '/reference/receiver', { mode }),
};

/**
 * The six events (design R7), written out: importing them from the protocol would bundle zod into
 * the page (26 KiB → 470 KiB). A test keeps the list equal to the protocol's.
 */
export const EVENTS = [
  'click',
  'conversion',
  'link.created',
  'link.updated',
  'link.deleted',
  'alert.triggered',
];
export { DELIVERY_STATUSES };
/** Statuses a delivery leaves only when someone acts on it (the ones retention deletes). */
export const FINAL_STATUSES: ReadonlySet<string> = new Set(FINAL);
