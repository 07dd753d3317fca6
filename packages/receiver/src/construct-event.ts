import {
  parseEvent,
  type RawBody,
  type SignatureHeader,
  type VerifyResult,
  verifySignature,
  verifySignatureAsync,
  type WebhookEvent,
} from '@linkhooks/protocol';
import { WebhookError } from './errors.js';
import {
  checkSchemeOptions,
  type HeaderSource,
  type StandardWebhooksOptions,
  verifyStandardOrThrow,
  verifyStandardOrThrowAsync,
  type XServiceSignatureOptions,
} from './scheme.js';

type Secrets = string | readonly string[];

const utf8 = new TextDecoder('utf-8', { fatal: true });

const MESSAGES = {
  missing_signature: 'The delivery has no X-Service-Signature header.',
  malformed_signature: 'X-Service-Signature is not a 64-digit hex HMAC-SHA256.',
  invalid_signature: 'X-Service-Signature does not match the body.',
  body_already_parsed: 'The body was parsed before verification; the raw bytes are needed.',
  invalid_body: 'The raw body must be a string, Uint8Array, Buffer or ArrayBuffer.',
  invalid_secret: 'No usable secret was configured.',
  crypto_unavailable: 'This runtime has no node:crypto for synchronous verification.',
} as const;

/** Turns a failed verification into the error the SDK throws. */
export function verificationError(result: Extract<VerifyResult, { valid: false }>): WebhookError {
  return new WebhookError(result.reason, MESSAGES[result.reason], { hint: result.hint });
}

/**
 * Decodes and validates a verified body. Bytes that are not UTF-8, or text that is not JSON, are
 * `invalid_json`; JSON that is not an envelope is `invalid_payload` with the schema issues.
 */
export function decodeEvent(rawBody: RawBody): WebhookEvent {
  let text: string;
  try {
    text = typeof rawBody === 'string' ? rawBody : utf8.decode(rawBody);
  } catch (cause) {
    throw new WebhookError('invalid_json', 'The body is not valid UTF-8.', { cause });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new WebhookError('invalid_json', 'The body is not valid JSON.', {
      cause,
      hint: text.length === 0 ? 'The body is empty.' : undefined,
    });
  }
  const parsed = parseEvent(value);
  if (!parsed.success) {
    const first = parsed.issues[0];
    const where = first && first.path.length > 0 ? ` at ${first.path.join('.')}` : '';
    throw new WebhookError(
      'invalid_payload',
      `The body is not a valid delivery envelope${where}: ${first?.message}`,
      {
        details: parsed.issues.map((i) => ({ path: i.path, message: i.message, code: i.code })),
      },
    );
  }
  return parsed.event;
}

/**
 * Verifies the signature over the raw body, then parses and validates the envelope (design R10:
 * verify before processing). Returns the typed event; throws `WebhookError` otherwise. An event
 * name outside the catalogue is returned as an unknown event, not thrown. Synchronous: needs
 * `node:crypto`; on edge runtimes use {@link constructEventAsync}.
 *
 * With `{scheme: 'standard-webhooks'}` the second argument is the request's headers, and
 * `webhook-id`, `webhook-timestamp` (within `toleranceSeconds`, default 300) and `webhook-signature`
 * are all required, `svix-*` names accepted; X-Service-Signature alone is refused (design D44).
 *
 * @example
 * const event = constructEvent(req.body, req.headers['x-service-signature'], process.env.LINKHOOKS_SECRET!);
 * if (event.event === 'click') console.log(event.data.click_id);
 * // Standard Webhooks: all the headers, and the scheme
 * const same = constructEvent(req.body, req.headers, secret, { scheme: 'standard-webhooks' });
 */
export function constructEvent(
  rawBody: RawBody,
  signature: SignatureHeader,
  secret: Secrets,
  options?: XServiceSignatureOptions,
): WebhookEvent;
export function constructEvent(
  rawBody: RawBody,
  headers: HeaderSource,
  secret: Secrets,
  options: StandardWebhooksOptions,
): WebhookEvent;
export function constructEvent(
  rawBody: RawBody,
  signature: SignatureHeader | HeaderSource,
  secret: Secrets,
  options?: XServiceSignatureOptions | StandardWebhooksOptions,
): WebhookEvent {
  if (options?.scheme === 'standard-webhooks') {
    checkSchemeOptions(options);
    verifyStandardOrThrow(rawBody, signature, secret, options);
    return decodeEvent(rawBody);
  }
  if (options !== undefined) checkSchemeOptions(options);
  const result = verifySignature(rawBody, signature as SignatureHeader, secret);
  if (!result.valid) {
    if (result.reason === 'crypto_unavailable') {
      throw new WebhookError('crypto_unavailable', MESSAGES.crypto_unavailable, {
        hint: 'Use `await constructEventAsync(rawBody, signature, secret)`, which verifies with Web Crypto.',
      });
    }
    throw verificationError(result);
  }
  return decodeEvent(rawBody);
}

/**
 * {@link constructEvent} for every runtime (Web Crypto where `node:crypto` is absent).
 *
 * @example
 * const event = await constructEventAsync(await request.arrayBuffer(), request.headers.get('x-service-signature'), secret);
 * const same = await constructEventAsync(body, request.headers, secret, { scheme: 'standard-webhooks' });
 */
export async function constructEventAsync(
  rawBody: RawBody,
  signature: SignatureHeader,
  secret: Secrets,
  options?: XServiceSignatureOptions,
): Promise<WebhookEvent>;
export async function constructEventAsync(
  rawBody: RawBody,
  headers: HeaderSource,
  secret: Secrets,
  options: StandardWebhooksOptions,
): Promise<WebhookEvent>;
export async function constructEventAsync(
  rawBody: RawBody,
  signature: SignatureHeader | HeaderSource,
  secret: Secrets,
  options?: XServiceSignatureOptions | StandardWebhooksOptions,
): Promise<WebhookEvent> {
  if (options !== undefined) checkSchemeOptions(options);
  if (options?.scheme === 'standard-webhooks') {
    await verifyStandardOrThrowAsync(rawBody, signature, secret, options);
    return decodeEvent(rawBody);
  }
  const result = await verifySignatureAsync(rawBody, signature as SignatureHeader, secret);
  if (!result.valid) throw verificationError(result);
  return decodeEvent(rawBody);
}
