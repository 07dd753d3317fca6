/**
 * The receiver's one error type. `code` is stable and documented; `hint` says what to change.
 * Check errors with `isWebhookError`, which looks at the code, so it also works across
 * duplicated copies of this package (CJS + ESM in one app).
 */
export type WebhookErrorCode =
  | 'missing_signature'
  | 'malformed_signature'
  | 'invalid_signature'
  | 'missing_webhook_id'
  | 'missing_timestamp'
  | 'body_only_signature'
  | 'malformed_webhook_id'
  | 'malformed_timestamp'
  | 'timestamp_out_of_tolerance'
  | 'invalid_secret'
  | 'crypto_unavailable'
  | 'body_already_parsed'
  | 'invalid_body'
  | 'payload_too_large'
  | 'invalid_json'
  | 'invalid_payload'
  | 'method_not_allowed'
  | 'duplicate_in_flight'
  | 'idempotency_unavailable'
  | 'handler_error';

/**
 * The HTTP status each code answers with in the adapters. 401 for every signature problem
 * (design R17), the Standard Webhooks headers and their timestamp included (design D44); 5xx for the receiver's own faults, so the service retries
 * once they are fixed; 409 for a duplicate in flight (design D10, design D12).
 */
export const WEBHOOK_ERROR_STATUS: Readonly<Record<WebhookErrorCode, number>> = {
  missing_signature: 401,
  malformed_signature: 401,
  invalid_signature: 401,
  missing_webhook_id: 401,
  missing_timestamp: 401,
  body_only_signature: 401,
  malformed_webhook_id: 401,
  malformed_timestamp: 401,
  timestamp_out_of_tolerance: 401,
  invalid_secret: 500,
  crypto_unavailable: 500,
  body_already_parsed: 500,
  invalid_body: 500,
  payload_too_large: 413,
  invalid_json: 400,
  invalid_payload: 400,
  method_not_allowed: 405,
  duplicate_in_flight: 409,
  idempotency_unavailable: 503,
  handler_error: 500,
};

const CODES = new Set(Object.keys(WEBHOOK_ERROR_STATUS));

export interface WebhookErrorOptions {
  hint?: string;
  details?: unknown;
  cause?: unknown;
}

export class WebhookError extends Error {
  override readonly name = 'WebhookError' as const;
  readonly code: WebhookErrorCode;
  /** What to change to make the delivery pass; safe to show to the developer. */
  readonly hint: string | undefined;
  /** Structured detail, e.g. the schema issues of an invalid payload. */
  readonly details: unknown;

  constructor(code: WebhookErrorCode, message: string, options: WebhookErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.hint = options.hint;
    this.details = options.details;
  }

  /** The status an HTTP adapter answers with for this error. */
  get status(): number {
    return WEBHOOK_ERROR_STATUS[this.code];
  }
}

/**
 * Whether `error` is a `WebhookError`, judged by its name and code rather than `instanceof`.
 *
 * @example
 * try { constructEvent(body, sig, secret) } catch (e) { if (isWebhookError(e)) console.log(e.code, e.hint) }
 */
export function isWebhookError(error: unknown): error is WebhookError {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { name?: unknown; code?: unknown };
  return e.name === 'WebhookError' && typeof e.code === 'string' && CODES.has(e.code);
}

/** A body the adapter could not read (a stream that failed, a client gone first): every adapter's words. */
export const unreadableBody = (cause: unknown): WebhookError =>
  new WebhookError('invalid_body', 'The request body could not be read.', { cause });
