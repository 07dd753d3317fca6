/**
 * Signing and constant-time verification of `X-Service-Signature` (design R9, design R10).
 *
 * The header is the lowercase hex HMAC-SHA256 of the raw body bytes, keyed with the UTF-8 bytes
 * of the endpoint secret, with no prefix (design R9). Verification decodes the hex into
 * 32 bytes after a length check and compares bytes, never strings, so it cannot throw on input of
 * equal character length but different byte length. Expected failures are values, not throws.
 */
import { fromHex, toHex } from './encoding.js';
import { constantTimeEqual, hmacSha256, hmacSha256HexSync, hmacSha256Sync } from './hmac.js';
import { unusableSecret } from './secret.js';

/** The header that carries the signature (design R9). */
export const SIGNATURE_HEADER = 'X-Service-Signature';

const DIGEST_BYTES = 32;

/** What a raw body may be: the bytes as received, or a string of them already decoded as UTF-8. */
export type RawBody = string | Uint8Array | ArrayBuffer;

/** A header value as frameworks hand it over: Node gives `string | string[] | undefined`, fetch `string | null`. */
export type SignatureHeader = string | readonly string[] | null | undefined;

/** Why a verification failed; each is also a `WebhookError` code in `@linkhooks/receiver`. */
export type VerifyFailureReason =
  | 'missing_signature'
  | 'malformed_signature'
  | 'invalid_signature'
  | 'body_already_parsed'
  | 'invalid_body'
  | 'invalid_secret'
  | 'crypto_unavailable';

export type VerifyResult =
  | { valid: true; reason: null; secretIndex: number }
  | { valid: false; reason: VerifyFailureReason; hint: string };

/**
 * Signs a raw body: lowercase hex HMAC-SHA256 keyed with the secret's UTF-8 bytes. Synchronous;
 * needs `node:crypto` (Node, Bun, Deno). Use {@link signAsync} on edge runtimes.
 *
 * @example
 * sign('Hello, World!', "It's a Secret to Everybody");
 * // '757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17'
 */
export function sign(rawBody: RawBody, secret: string): string {
  assertSignInput(rawBody, secret);
  if (!hmacSha256HexSync) {
    throw new Error('sign: this runtime has no node:crypto; use signAsync, which runs on Web Crypto');
  }
  return hmacSha256HexSync(secret, bodyBytes(rawBody)!);
}

/**
 * {@link sign} for every runtime, Web Crypto included.
 *
 * @example
 * const signature = await signAsync(body, secret);
 */
export async function signAsync(rawBody: RawBody, secret: string): Promise<string> {
  assertSignInput(rawBody, secret);
  return toHex(await hmacSha256(secret, bodyBytes(rawBody)!));
}

function assertSignInput(rawBody: RawBody, secret: string): void {
  const problem = unusableSecret(secret);
  if (problem) throw new TypeError(`sign: ${problem}`);
  if (bodyBytes(rawBody) === undefined) {
    throw new TypeError('sign: rawBody must be a string, Uint8Array, Buffer or ArrayBuffer');
  }
}

function bodyBytes(rawBody: unknown): string | Uint8Array | undefined {
  if (typeof rawBody === 'string' || rawBody instanceof Uint8Array) return rawBody;
  if (rawBody instanceof ArrayBuffer) return new Uint8Array(rawBody);
  if (ArrayBuffer.isView(rawBody))
    return new Uint8Array(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  return undefined;
}

type Failure = Extract<VerifyResult, { valid: false }>;
type Checked = { ok: true; body: string | Uint8Array; given: Uint8Array; secrets: string[] } | Failure;

function fail(reason: VerifyFailureReason, hint: string): Failure {
  return { valid: false, reason, hint };
}

/** Validates every input before any digest is computed. Pure; shared by both verify variants. */
function check(rawBody: unknown, signature: unknown, secret: unknown): Checked {
  const secrets = Array.isArray(secret) ? secret : [secret];
  if (secrets.length === 0) {
    return fail('invalid_secret', 'Pass the endpoint secret as a non-empty string, or an array of them.');
  }
  for (const s of secrets) {
    const problem = unusableSecret(s);
    if (problem) return fail('invalid_secret', problem);
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
  const given = parseSignature(signature);
  if (!(given instanceof Uint8Array)) return given;
  return { ok: true, body, given, secrets: secrets as string[] };
}

/** Decodes the header value to 32 bytes, or says what is wrong with it. */
function parseSignature(signature: unknown): Uint8Array | Failure {
  if (signature === undefined || signature === null || signature === '') {
    return fail(
      'missing_signature',
      `Every linkhooks delivery carries ${SIGNATURE_HEADER}: this request did not come from the service, or a proxy dropped the header.`,
    );
  }
  if (typeof signature !== 'string') {
    return fail('malformed_signature', `${SIGNATURE_HEADER} must be a single string header value.`);
  }
  // Bound the work before touching a hostile value: a valid header is 64 characters.
  if (signature.length > 200) {
    return fail(
      'malformed_signature',
      `${SIGNATURE_HEADER} is ${signature.length} characters; it must be 64 hex digits.`,
    );
  }
  const value = signature.trim();
  if (/^sha256=/i.test(value)) {
    return fail(
      'malformed_signature',
      `${SIGNATURE_HEADER} carries a "sha256=" prefix. linkhooks signatures are bare hex: that header was not produced by this service.`,
    );
  }
  const bytes = fromHex(value, DIGEST_BYTES);
  if (!bytes) {
    return fail(
      'malformed_signature',
      `${SIGNATURE_HEADER} must be exactly 64 hexadecimal digits; got ${value.length} characters.`,
    );
  }
  return bytes;
}

/** Compares the digest of every secret, so the time taken does not say which one matched. */
function decide(checked: Extract<Checked, { ok: true }>, digests: Uint8Array[]): VerifyResult {
  let matched = -1;
  for (let i = 0; i < digests.length; i++) {
    if (constantTimeEqual(digests[i]!, checked.given) && matched < 0) matched = i;
  }
  if (matched >= 0) return { valid: true, reason: null, secretIndex: matched };
  return fail('invalid_signature', mismatchHint(checked.body, checked.secrets));
}

/** The likely cause of a mismatch, cheapest checks first. Only runs on the failure path. */
export function mismatchHint(body: string | Uint8Array, secrets: readonly string[]): string {
  if (secrets.some((s) => s.trim() !== s)) {
    return 'The secret has leading or trailing whitespace; copy it again without it.';
  }
  if (secrets.some((s) => !s.startsWith('whsec_'))) {
    return "Secrets begin with whsec_: check that you passed the endpoint's signing secret.";
  }
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body.subarray(0, 4096));
  // A delivered body is compact JSON: it never holds a raw line break. One that does was re-formatted.
  if (/[\r\n]/.test(text)) {
    return 'The body looks re-formatted (it has line breaks). Verify the raw request bytes exactly as received, not a re-serialised body.';
  }
  if (typeof body === 'string' && body.includes('\uFFFD')) {
    return 'The body string holds U+FFFD: it was decoded from bytes that were not UTF-8. Pass the raw Buffer instead of a string.';
  }
  return "The signature does not match. Check that the secret is this endpoint's (each endpoint has its own) and that the body is the raw request bytes, not a re-serialised object.";
}

/**
 * Verifies `X-Service-Signature` over the raw body with one secret, or several during a rotation
 * (the result says which matched). Never throws: hostile input gives `{valid: false, reason}`.
 * Synchronous; on runtimes without `node:crypto` it answers `crypto_unavailable` — use
 * {@link verifySignatureAsync} there.
 *
 * @example
 * const result = verifySignature(rawBody, req.headers['x-service-signature'], [newSecret, oldSecret]);
 * if (!result.valid) return res.status(401).json({ error: result.reason });
 */
export function verifySignature(
  rawBody: RawBody,
  signature: SignatureHeader,
  secret: string | readonly string[],
): VerifyResult {
  const checked = check(rawBody, signature, secret);
  if (!('ok' in checked)) return checked;
  if (!hmacSha256Sync) {
    return fail(
      'crypto_unavailable',
      'This runtime has no node:crypto; use verifySignatureAsync (Web Crypto).',
    );
  }
  const digest = hmacSha256Sync;
  return decide(
    checked,
    checked.secrets.map((s) => digest(s, checked.body)),
  );
}

/**
 * {@link verifySignature} for every runtime: Web Crypto where `node:crypto` is absent.
 *
 * @example
 * const result = await verifySignatureAsync(await request.arrayBuffer(), request.headers.get('x-service-signature'), secret);
 */
export async function verifySignatureAsync(
  rawBody: RawBody,
  signature: SignatureHeader,
  secret: string | readonly string[],
): Promise<VerifyResult> {
  const checked = check(rawBody, signature, secret);
  if (!('ok' in checked)) return checked;
  const digests = await Promise.all(checked.secrets.map((s) => hmacSha256(s, checked.body)));
  return decide(checked, digests);
}
