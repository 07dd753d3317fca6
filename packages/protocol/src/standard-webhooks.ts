/**
 * The Standard Webhooks form of a delivery (design D32): `webhook-id`, `webhook-timestamp` and
 * `webhook-signature` (`v1,<base64>` of HMAC-SHA256 over `id.timestamp.body`, keyed with the
 * secret's base64-decoded bytes). Sent beside X-Service-Signature, never instead of it (design R9).
 * The signed timestamp is what makes a captured delivery useless after the tolerance.
 */
import { concatBytes, fromBase64, toBase64, toBytes } from './encoding.js';
import { constantTimeEqual, hmacSha256, hmacSha256PartsSync } from './hmac.js';
import { SECRET_PREFIX, unusableSecret } from './secret.js';
import type { RawBody, SignatureHeader } from './signature.js';

/** The three headers, lowercase as HTTP/2 and fetch give them. */
export const STANDARD_WEBHOOK_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

/** The same headers as Svix names them; a receiver accepts either. */
export const SVIX_WEBHOOK_HEADERS = {
  id: 'svix-id',
  timestamp: 'svix-timestamp',
  signature: 'svix-signature',
} as const;

/** How far a delivery's timestamp may be from the receiver's clock, either way (design D32). */
export const DEFAULT_TOLERANCE_SECONDS = 300;

const DIGEST_BYTES = 32;
const MAX_ID_LENGTH = 256;
const MAX_SIGNATURE_HEADER = 4096;

/** Why a Standard Webhooks verification failed; each is also a receiver error code. */
export type StandardVerifyFailureReason =
  | 'missing_signature'
  | 'missing_webhook_id'
  | 'missing_timestamp'
  | 'body_only_signature'
  | 'malformed_webhook_id'
  | 'malformed_timestamp'
  | 'timestamp_out_of_tolerance'
  | 'malformed_signature'
  | 'invalid_signature'
  | 'invalid_secret'
  | 'body_already_parsed'
  | 'invalid_body'
  | 'crypto_unavailable';

export type StandardVerifyResult =
  | { valid: true; reason: null; secretIndex: number; id: string; timestamp: number }
  | { valid: false; reason: StandardVerifyFailureReason; hint: string };

/** The three header values as received, and whether X-Service-Signature came too. */
export interface StandardWebhookHeaders {
  id: SignatureHeader;
  timestamp: SignatureHeader;
  signature: SignatureHeader;
  /** The X-Service-Signature value, to tell a body-only delivery from a request with no signature. */
  serviceSignature?: SignatureHeader;
}

/**
 * Reads the three headers through a framework's header getter, `webhook-*` first, then `svix-*`.
 *
 * @example
 * const headers = readStandardWebhookHeaders((name) => request.headers.get(name));
 */
export function readStandardWebhookHeaders(
  get: (lowercaseName: string) => SignatureHeader,
): StandardWebhookHeaders {
  const pick = (name: keyof typeof STANDARD_WEBHOOK_HEADERS): SignatureHeader => {
    const value = get(STANDARD_WEBHOOK_HEADERS[name]);
    return value === undefined || value === null ? get(SVIX_WEBHOOK_HEADERS[name]) : value;
  };
  const id = pick('id');
  const timestamp = pick('timestamp');
  const signature = pick('signature');
  const absent = (v: SignatureHeader) => v === undefined || v === null || v === '';
  // Only a request with none of the three is told apart by X-Service-Signature: read it then only.
  return absent(id) && absent(timestamp) && absent(signature)
    ? { id, timestamp, signature, serviceSignature: get('x-service-signature') }
    : { id, timestamp, signature };
}

/**
 * The HMAC key of the Standard Webhooks form: the secret without `whsec_`, base64-decoded (either
 * alphabet, padding optional). `null` when the secret does not decode to any bytes.
 *
 * @example
 * standardWebhookKey('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'); // 24 bytes
 */
export function standardWebhookKey(secret: string): Uint8Array | null {
  if (typeof secret !== 'string') return null;
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = fromBase64(encoded);
  return key && key.length > 0 ? key : null;
}

// Decoding the key is a fixed cost of every verification; keep the last few, as hmac.ts keeps Web
// Crypto keys. Internal only: the arrays handed out by standardWebhookKey stay the caller's own.
const KEY_CACHE_LIMIT = 16;
const decodedKeys = new Map<string, Uint8Array | null>();

function keyOf(secret: unknown): Uint8Array | null {
  if (typeof secret !== 'string') return null;
  let key = decodedKeys.get(secret);
  if (key === undefined) {
    // Checked once, when it is decoded: only a usable secret is kept with its key.
    key = unusableSecret(secret) ? null : standardWebhookKey(secret);
    if (decodedKeys.size >= KEY_CACHE_LIMIT) decodedKeys.delete(decodedKeys.keys().next().value!);
    decodedKeys.set(secret, key);
  }
  return key;
}

/** What is signed: `id.timestamp.body`, the body as its exact bytes. */
function signedParts(id: string, timestamp: number, body: string | Uint8Array): (string | Uint8Array)[] {
  return [`${id}.${timestamp}.`, body];
}

export interface StandardSignInput {
  /** The message id, the same on every attempt of a delivery (the event id). */
  id: string;
  /** Unix seconds of this attempt. */
  timestamp: number;
  body: RawBody;
  /** One secret, or several during a rotation: the header then carries one signature per secret. */
  secret: string | readonly string[];
}

function signInput(input: StandardSignInput): { body: string | Uint8Array; keys: Uint8Array[] } {
  const { id, timestamp } = input;
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_LENGTH) {
    throw new TypeError(`signStandardWebhook: id must be a string of 1 to ${MAX_ID_LENGTH} characters`);
  }
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new TypeError('signStandardWebhook: timestamp must be whole Unix seconds');
  }
  const body = bodyBytes(input.body);
  if (body === undefined) {
    throw new TypeError('signStandardWebhook: body must be a string, Uint8Array, Buffer or ArrayBuffer');
  }
  const secrets = typeof input.secret === 'string' ? [input.secret] : [...input.secret];
  const keys = secrets.map(standardWebhookKey);
  if (keys.length === 0 || keys.some((k) => k === null)) {
    throw new TypeError('signStandardWebhook: every secret must be whsec_ followed by base64');
  }
  return { body, keys: keys as Uint8Array[] };
}

/**
 * The `webhook-signature` value for a delivery: `v1,<base64>`, one per secret, space-separated.
 * Synchronous; needs `node:crypto`. Use {@link signStandardWebhookAsync} on edge runtimes.
 *
 * @example
 * signStandardWebhook({ id: 'evt_1', timestamp: 1700000000, body, secret }); // 'v1,K5oZ…='
 */
export function signStandardWebhook(input: StandardSignInput): string {
  const { body, keys } = signInput(input);
  const digest = hmacSha256PartsSync;
  if (!digest) {
    throw new Error('signStandardWebhook: this runtime has no node:crypto; use signStandardWebhookAsync');
  }
  const parts = signedParts(input.id, input.timestamp, body);
  return keys.map((k) => `v1,${toBase64(digest(k, parts))}`).join(' ');
}

/**
 * {@link signStandardWebhook} for every runtime, Web Crypto included.
 *
 * @example
 * const value = await signStandardWebhookAsync({ id, timestamp, body, secret });
 */
export async function signStandardWebhookAsync(input: StandardSignInput): Promise<string> {
  const { body, keys } = signInput(input);
  const content = signedContent(input.id, input.timestamp, body);
  const digests = await Promise.all(keys.map((k) => hmacSha256(k, content)));
  return digests.map((d) => `v1,${toBase64(d)}`).join(' ');
}

function signedContent(id: string, timestamp: number, body: string | Uint8Array): string | Uint8Array {
  return typeof body === 'string'
    ? `${id}.${timestamp}.${body}`
    : concatBytes(toBytes(`${id}.${timestamp}.`), body);
}

function bodyBytes(rawBody: unknown): string | Uint8Array | undefined {
  if (typeof rawBody === 'string' || rawBody instanceof Uint8Array) return rawBody;
  if (rawBody instanceof ArrayBuffer) return new Uint8Array(rawBody);
  if (ArrayBuffer.isView(rawBody))
    return new Uint8Array(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  return undefined;
}

export interface StandardVerifyOptions {
  /** Seconds a timestamp may differ from `now`, either way. Default {@link DEFAULT_TOLERANCE_SECONDS}. */
  toleranceSeconds?: number;
  /** The receiver's clock; injected in tests. Default `Date.now()`. */
  now?: Date | number;
}

type Failure = Extract<StandardVerifyResult, { valid: false }>;
interface Checked {
  body: string | Uint8Array;
  keys: Uint8Array[];
  id: string;
  timestamp: number;
  given: Uint8Array[];
}

function fail(reason: StandardVerifyFailureReason, hint: string): Failure {
  return { valid: false, reason, hint };
}

function single(value: SignatureHeader): string | undefined | null {
  if (value === undefined || value === null || value === '') return undefined;
  return typeof value === 'string' ? value : null;
}

/** Validates every input and the clock before any digest is computed. Pure. */
function check(
  rawBody: unknown,
  headers: StandardWebhookHeaders,
  secret: unknown,
  options: StandardVerifyOptions,
): Checked | Failure {
  const keys = (Array.isArray(secret) ? secret : [secret]).map(keyOf);
  if (keys.length === 0 || keys.includes(null)) {
    return fail(
      'invalid_secret',
      "Pass the endpoint's signing secret (whsec_ followed by base64) as a string, or an array of them.",
    );
  }
  const body = bodyBytes(rawBody);
  if (body === undefined) {
    return rawBody !== null && typeof rawBody === 'object'
      ? fail(
          'body_already_parsed',
          'The body is a parsed object. Verify the raw bytes as received: a re-serialised body does not match.',
        )
      : fail('invalid_body', 'Pass the raw body as a string, Uint8Array, Buffer or ArrayBuffer.');
  }
  const id = single(headers.id);
  const ts = single(headers.timestamp);
  const sig = single(headers.signature);
  if (id === undefined && ts === undefined && sig === undefined) {
    return single(headers.serviceSignature)
      ? fail(
          'body_only_signature',
          'This delivery is signed over the body only (X-Service-Signature) and carries no webhook-signature: turn on Standard Webhooks for this endpoint, or verify it with the default scheme.',
        )
      : fail(
          'missing_signature',
          'The request carries no webhook-signature, webhook-id or webhook-timestamp header.',
        );
  }
  if (sig === undefined) return fail('missing_signature', 'The webhook-signature header is missing.');
  if (id === undefined) return fail('missing_webhook_id', 'The webhook-id header is missing.');
  if (ts === undefined) return fail('missing_timestamp', 'The webhook-timestamp header is missing.');
  if (id === null || id.length > MAX_ID_LENGTH) {
    return fail(
      'malformed_webhook_id',
      `webhook-id must be one value of at most ${MAX_ID_LENGTH} characters.`,
    );
  }
  if (ts === null || !/^\d{1,12}$/.test(ts)) {
    return fail('malformed_timestamp', 'webhook-timestamp must be whole Unix seconds, such as 1700000000.');
  }
  const timestamp = Number(ts);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const nowMs = options.now === undefined ? Date.now() : Number(options.now);
  // A clock or tolerance that is not a number (an invalid Date, Number(undefined)) would let every
  // timestamp through: `NaN > tolerance` is false. Refused instead, whatever the timestamp.
  if (!Number.isFinite(nowMs) || typeof tolerance !== 'number' || !(tolerance >= 0)) {
    return fail(
      'timestamp_out_of_tolerance',
      'The clock or toleranceSeconds this verification was given is not usable (not a number, or a tolerance below 0), so no timestamp can be checked.',
    );
  }
  const skew = Math.floor(nowMs / 1000) - timestamp;
  if (Math.abs(skew) > tolerance) {
    return fail(
      'timestamp_out_of_tolerance',
      skew > 0
        ? `webhook-timestamp is ${skew} s old, beyond the ${tolerance} s tolerance: a replayed or long-delayed delivery, or this server's clock is wrong.`
        : `webhook-timestamp is ${-skew} s in the future, beyond the ${tolerance} s tolerance: this server's clock is behind.`,
    );
  }
  if (sig === null || sig.length > MAX_SIGNATURE_HEADER) {
    return fail(
      'malformed_signature',
      'webhook-signature must be one header of space-separated v1,<base64> values.',
    );
  }
  const given: Uint8Array[] = [];
  for (const entry of sig.split(' ')) {
    if (!entry.startsWith('v1,')) continue; // other versions are not ours to judge
    const bytes = fromBase64(entry.slice(3));
    if (bytes?.length === DIGEST_BYTES) given.push(bytes);
  }
  if (given.length === 0) {
    return fail('malformed_signature', 'webhook-signature holds no v1,<base64> signature of 32 bytes.');
  }
  return { body, keys: keys as Uint8Array[], id, timestamp, given };
}

function decide(checked: Checked, expected: Uint8Array[]): StandardVerifyResult {
  let match = -1;
  // Every comparison runs, so the time taken does not say which secret or entry matched.
  for (let i = expected.length - 1; i >= 0; i--) {
    for (const g of checked.given) if (constantTimeEqual(expected[i]!, g)) match = i;
  }
  if (match >= 0) {
    return { valid: true, reason: null, secretIndex: match, id: checked.id, timestamp: checked.timestamp };
  }
  return fail(
    'invalid_signature',
    "No webhook-signature matches. Check that the secret is this endpoint's and that the body is the raw request bytes, not a re-serialised object.",
  );
}

/**
 * Verifies a Standard Webhooks delivery: all three headers present, the timestamp within the
 * tolerance, and a `v1` signature made with one of the secrets. Never throws. Requires the
 * headers: a body-only (X-Service-Signature) delivery is refused, never accepted instead.
 *
 * @example
 * const result = verifyStandardWebhook(rawBody, readStandardWebhookHeaders((n) => req.headers[n]), secret);
 */
export function verifyStandardWebhook(
  rawBody: RawBody,
  headers: StandardWebhookHeaders,
  secret: string | readonly string[],
  options: StandardVerifyOptions = {},
): StandardVerifyResult {
  const checked = check(rawBody, headers, secret, options);
  if ('valid' in checked) return checked;
  const digest = hmacSha256PartsSync;
  if (!digest) {
    return fail(
      'crypto_unavailable',
      'This runtime has no node:crypto; use verifyStandardWebhookAsync (Web Crypto).',
    );
  }
  const parts = signedParts(checked.id, checked.timestamp, checked.body);
  return decide(
    checked,
    checked.keys.map((k) => digest(k, parts)),
  );
}

/**
 * {@link verifyStandardWebhook} for every runtime: Web Crypto where `node:crypto` is absent.
 *
 * @example
 * const result = await verifyStandardWebhookAsync(body, readStandardWebhookHeaders((n) => request.headers.get(n)), secret);
 */
export async function verifyStandardWebhookAsync(
  rawBody: RawBody,
  headers: StandardWebhookHeaders,
  secret: string | readonly string[],
  options: StandardVerifyOptions = {},
): Promise<StandardVerifyResult> {
  const checked = check(rawBody, headers, secret, options);
  if ('valid' in checked) return checked;
  const content = signedContent(checked.id, checked.timestamp, checked.body);
  return decide(checked, await Promise.all(checked.keys.map((k) => hmacSha256(k, content))));
}
