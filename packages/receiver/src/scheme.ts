/**
 * The two ways a delivery can be verified (design D44): the body-only X-Service-Signature, the
 * default (design R9), or the Standard Webhooks form (design D32), which signs an id and a
 * timestamp with the body. A receiver picks one explicitly; the Standard Webhooks scheme never
 * falls back to the body-only signature, so a stripped request cannot downgrade it.
 */
import {
  readStandardWebhookHeaders,
  type SignatureHeader,
  type StandardVerifyResult,
  verifyStandardWebhook,
  verifyStandardWebhookAsync,
} from '@linkhooks/protocol';
import { WebhookError } from './errors.js';

export type Scheme = 'x-service-signature' | 'standard-webhooks';

/** The receiver's clock, read in milliseconds; injected in tests (as the sender's `clock`). */
export interface ReceiverClock {
  now(): number;
}

/** Options of the default scheme: X-Service-Signature over the body alone. */
export interface XServiceSignatureOptions {
  scheme?: 'x-service-signature';
}

/** Options of the Standard Webhooks scheme: `webhook-id`, `webhook-timestamp`, `webhook-signature`. */
export interface StandardWebhooksOptions {
  scheme: 'standard-webhooks';
  /** How far `webhook-timestamp` may be from the receiver's clock, either way. Default 300 s. */
  toleranceSeconds?: number;
  /** Default: the system clock, `Date.now()`. */
  clock?: ReceiverClock;
}

export type SchemeOptions = XServiceSignatureOptions | StandardWebhooksOptions;

/** Request headers as frameworks give them: Web `Headers`, Node's `req.headers`, or a plain object. */
export type HeaderSource =
  | { get(name: string): string | null | undefined }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

const systemClock: ReceiverClock = { now: () => Date.now() };

/** A lowercase-name reader over any {@link HeaderSource}; a plain object's keys may be any case. */
export function headerGetter(source: HeaderSource): (name: string) => SignatureHeader {
  if (typeof (source as { get?: unknown }).get === 'function') {
    return (name) => (source as { get(n: string): string | null | undefined }).get(name);
  }
  const record = source as Readonly<Record<string, string | readonly string[] | undefined>>;
  return (name) => {
    const value = record[name];
    if (value !== undefined) return value;
    for (const key of Object.keys(record)) if (key.toLowerCase() === name) return record[key];
    return undefined;
  };
}

/** Checks scheme options once, when a handler is built, so a typo fails at start-up. */
export function checkSchemeOptions(options: {
  scheme?: unknown;
  toleranceSeconds?: unknown;
  clock?: unknown;
}): void {
  const { scheme, toleranceSeconds, clock } = options;
  if (scheme !== undefined && scheme !== 'x-service-signature' && scheme !== 'standard-webhooks') {
    throw new TypeError(
      `linkhooks: \`scheme\` is "x-service-signature" (the default) or "standard-webhooks", not ${JSON.stringify(scheme)}`,
    );
  }
  if (scheme !== 'standard-webhooks' && (toleranceSeconds !== undefined || clock !== undefined)) {
    // A tolerance without the scheme would read as replay protection that is not there.
    throw new TypeError(
      'linkhooks: `toleranceSeconds` and `clock` apply to scheme: "standard-webhooks" only; X-Service-Signature signs no timestamp',
    );
  }
  if (
    toleranceSeconds !== undefined &&
    !(typeof toleranceSeconds === 'number' && Number.isFinite(toleranceSeconds) && toleranceSeconds >= 0)
  ) {
    throw new TypeError('linkhooks: `toleranceSeconds` must be a number of seconds, 0 or more');
  }
  if (clock !== undefined && typeof (clock as { now?: unknown })?.now !== 'function') {
    throw new TypeError('linkhooks: `clock` must have a now() that returns milliseconds');
  }
}

const MESSAGES = {
  missing_signature: 'The delivery has no webhook-signature header.',
  missing_webhook_id: 'The delivery has no webhook-id header.',
  missing_timestamp: 'The delivery has no webhook-timestamp header.',
  body_only_signature:
    'The delivery is signed over the body only (X-Service-Signature); this receiver requires Standard Webhooks headers.',
  malformed_webhook_id: 'webhook-id is not a single id of at most 256 characters.',
  malformed_timestamp: 'webhook-timestamp is not whole Unix seconds.',
  timestamp_out_of_tolerance: "webhook-timestamp is too far from this server's clock.",
  malformed_signature: 'webhook-signature holds no v1,<base64> signature.',
  invalid_signature: 'webhook-signature does not match the id, timestamp and body.',
  body_already_parsed: 'The body was parsed before verification; the raw bytes are needed.',
  invalid_body: 'The raw body must be a string, Uint8Array, Buffer or ArrayBuffer.',
  invalid_secret: 'No usable secret was configured (whsec_ followed by base64).',
  crypto_unavailable: 'This runtime has no node:crypto for synchronous verification.',
} as const;

type StandardFailure = Extract<StandardVerifyResult, { valid: false }>;

/** Turns a failed Standard Webhooks verification into the error the SDK throws. */
export function standardVerificationError(result: StandardFailure): WebhookError {
  return new WebhookError(result.reason, MESSAGES[result.reason], { hint: result.hint });
}

function headersOf(source: HeaderSource | SignatureHeader) {
  if (source === null || typeof source !== 'object' || Array.isArray(source)) {
    throw new WebhookError('missing_signature', MESSAGES.missing_signature, {
      hint: 'In the standard-webhooks scheme pass all the request headers (req.headers, request.headers), not one header value.',
    });
  }
  return readStandardWebhookHeaders(headerGetter(source as HeaderSource));
}

function verifyOptions(options: StandardWebhooksOptions) {
  return {
    ...(options.toleranceSeconds === undefined ? {} : { toleranceSeconds: options.toleranceSeconds }),
    now: (options.clock ?? systemClock).now(),
  };
}

/** Verifies a Standard Webhooks delivery synchronously; returns the webhook-id or throws. */
export function verifyStandardOrThrow(
  rawBody: Parameters<typeof verifyStandardWebhook>[0],
  source: HeaderSource | SignatureHeader,
  secret: string | readonly string[],
  options: StandardWebhooksOptions,
): Extract<StandardVerifyResult, { valid: true }> {
  const result = verifyStandardWebhook(rawBody, headersOf(source), secret, verifyOptions(options));
  if (result.valid) return result;
  if (result.reason === 'crypto_unavailable') {
    throw new WebhookError('crypto_unavailable', MESSAGES.crypto_unavailable, {
      hint: 'Use `await constructEventAsync(rawBody, headers, secret, options)`, which verifies with Web Crypto.',
    });
  }
  throw standardVerificationError(result);
}

/** {@link verifyStandardOrThrow} through Web Crypto. */
export async function verifyStandardOrThrowAsync(
  rawBody: Parameters<typeof verifyStandardWebhook>[0],
  source: HeaderSource | SignatureHeader,
  secret: string | readonly string[],
  options: StandardWebhooksOptions,
): Promise<Extract<StandardVerifyResult, { valid: true }>> {
  const result = await verifyStandardWebhookAsync(rawBody, headersOf(source), secret, verifyOptions(options));
  if (result.valid) return result;
  throw standardVerificationError(result);
}
