/**
 * The sender's one error type (design C6): a literal name, a stable code, and the HTTP status
 * the management API answers with.
 */
export type SenderErrorCode =
  | 'invalid_event'
  | 'invalid_endpoint'
  | 'unsafe_url'
  | 'not_found'
  | 'endpoint_disabled'
  | 'endpoint_paused'
  | 'delivery_in_flight'
  | 'invalid_option'
  | 'invalid_request'
  | 'unauthorized'
  | 'plan_required'
  | 'route_not_found'
  | 'method_not_allowed'
  | 'payload_too_large'
  | 'ingest_disabled'
  | 'csrf_check_failed'
  | 'rate_limited'
  | 'quota_exceeded'
  | 'secret_rotation_required'
  | 'secret_not_encrypted'
  | 'master_key_mismatch'
  | 'master_key_missing'
  | 'storage_failed'
  | 'store_unavailable'
  | 'overloaded'
  | 'internal';

export const SENDER_ERROR_STATUS: Readonly<Record<SenderErrorCode, number>> = {
  invalid_event: 400,
  invalid_endpoint: 400,
  unsafe_url: 400,
  not_found: 404,
  endpoint_disabled: 409,
  endpoint_paused: 409,
  delivery_in_flight: 409,
  invalid_option: 500,
  invalid_request: 400,
  unauthorized: 401,
  plan_required: 403,
  route_not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  ingest_disabled: 503,
  csrf_check_failed: 403,
  rate_limited: 429,
  quota_exceeded: 429,
  secret_rotation_required: 400,
  // A secret at rest the configured master keys cannot open (design D29, D30): the operator's to fix.
  secret_not_encrypted: 500,
  master_key_mismatch: 500,
  master_key_missing: 500,
  // The disk refused a sync (design D33): nothing more is acknowledged until a restart.
  storage_failed: 503,
  // The database refused or dropped a connection, or is starting, stopping or full
  // (store/unavailable.ts): the request may be sent again.
  store_unavailable: 503,
  // More ingest in flight than the service holds at once (api/ingest-admission.ts): send it again.
  overloaded: 503,
  internal: 500,
};

const CODES = new Set(Object.keys(SENDER_ERROR_STATUS));

export class SenderError extends Error {
  override readonly name = 'SenderError' as const;
  readonly code: SenderErrorCode;
  readonly details: unknown;
  /** For `rate_limited`, `quota_exceeded`, `store_unavailable` and `overloaded`: when to try again (`Retry-After`). */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    code: SenderErrorCode,
    message: string,
    options: { details?: unknown; cause?: unknown; retryAfterSeconds?: number } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  get status(): number {
    return SENDER_ERROR_STATUS[this.code];
  }
}

/** Whether `error` is a `SenderError`, judged by name and code rather than `instanceof` alone. */
export function isSenderError(error: unknown): error is SenderError {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { name?: unknown; code?: unknown };
  return e.name === 'SenderError' && typeof e.code === 'string' && CODES.has(e.code);
}
