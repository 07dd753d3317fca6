/**
 * Why a Standard Webhooks delivery does not verify (design D32, design D44): which header is
 * missing, how stale the timestamp is and whether the signature would match apart from it, a
 * body-only delivery sent to a Standard Webhooks receiver, or the usual mistakes of the body-only
 * form (whitespace around the secret, a re-formatted body, a final newline). Pure, like diagnose.ts;
 * every check goes through the protocol's verify functions.
 */
import {
  DEFAULT_TOLERANCE_SECONDS,
  isStandardWebhooksSecret,
  readStandardWebhookHeaders,
  type StandardVerifyResult,
  sign,
  verifySignature,
  verifyStandardWebhook,
} from '@linkhooks/protocol';
import type { Diagnosis } from './diagnose.js';

export interface StandardDiagnosisOptions {
  toleranceSeconds?: number;
  /** The time to judge the timestamp against, in ms. */
  now: number;
}

export type StandardDiagnosis =
  | { valid: true; message: string }
  | {
      valid: false;
      cause:
        | Extract<StandardVerifyResult, { valid: false }>['reason']
        | Extract<Diagnosis, { valid: false }>['cause']
        | 'secret_as_text'
        | 'headers_altered';
      message: string;
    };

const LIBRARY_NOTE =
  ' Note: this secret is the earlier form (base64url): linkhooks verifies it, but Standard Webhooks libraries do not. Rotate it to get one they accept.';

/**
 * @example
 * diagnoseStandard(body, { 'webhook-id': 'evt_1', 'webhook-timestamp': '1700000000', 'webhook-signature': 'v1,…' }, secret, { now: Date.now() });
 */
export function diagnoseStandard(
  body: Uint8Array,
  headers: Readonly<Record<string, string>>,
  secret: string,
  options: StandardDiagnosisOptions,
): StandardDiagnosis {
  // The diagnosis also looks at X-Service-Signature when the three headers came too.
  const read = {
    ...readStandardWebhookHeaders((name) => headers[name]),
    serviceSignature: headers['x-service-signature'],
  };
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const verify = (b: Uint8Array | string, s: string, now = options.now) =>
    verifyStandardWebhook(b, read, s, { toleranceSeconds: tolerance, now });
  const result = verify(body, secret);
  const note = isStandardWebhooksSecret(secret) ? '' : LIBRARY_NOTE;
  if (result.valid) {
    const age = Math.floor(options.now / 1000) - result.timestamp;
    return {
      valid: true,
      message: `valid: webhook-signature matches this body, id and secret; the timestamp is ${describeAge(age)}, within the ${tolerance} s tolerance.${note}`,
    };
  }
  switch (result.reason) {
    case 'body_only_signature': {
      const service = read.serviceSignature;
      const matches = typeof service === 'string' && verifySignature(body, service, secret).valid;
      return {
        valid: false,
        cause: 'body_only_signature',
        message: `invalid for a Standard Webhooks receiver: the delivery has X-Service-Signature only, no webhook-* headers. Turn on Standard Webhooks for the endpoint (standard_webhooks: true, in the dashboard or the API), or check that no proxy drops the headers.${matches ? ' Its X-Service-Signature does match this secret: the default scheme would accept it.' : ''}`,
      };
    }
    case 'missing_signature':
    case 'missing_webhook_id':
    case 'missing_timestamp': {
      const present = Object.keys(headers).filter((h) => /^(webhook|svix)-/.test(h));
      return {
        valid: false,
        cause: result.reason,
        message: `invalid: ${result.hint} All three of webhook-id, webhook-timestamp and webhook-signature are needed (or their svix-* names); got ${present.length > 0 ? present.join(', ') : 'none of them'}.`,
      };
    }
    case 'timestamp_out_of_tolerance': {
      const signedAt = Number(read.timestamp);
      const apartFromTime = verify(body, secret, signedAt * 1000).valid;
      return {
        valid: false,
        cause: 'timestamp_out_of_tolerance',
        message: `invalid: ${result.hint} ${
          apartFromTime
            ? 'The signature itself matches: only the time is off.'
            : 'The signature does not match either.'
        } Checking a delivery from the log? Give the time it was received with --now <Unix seconds>.`,
      };
    }
    case 'invalid_secret':
      if (secret.trim() !== secret && verify(body, secret.trim()).valid)
        return { valid: false, ...whitespace };
      return {
        valid: false,
        cause: 'invalid_secret',
        message: `invalid: the secret is not whsec_ followed by base64, so it has no key for the Standard Webhooks form. Use the endpoint's secret as shown.`,
      };
    case 'invalid_signature':
      return { valid: false, ...mismatch(body, read, secret, verify) };
    default:
      return { valid: false, cause: result.reason, message: `invalid: ${result.hint}` };
  }
}

const whitespace = {
  cause: 'secret_whitespace',
  message:
    'invalid: the secret has whitespace around it (a copied newline?). Without it, the signature matches.',
} as const;

type Verify = (b: Uint8Array | string, s: string) => StandardVerifyResult;

function describeAge(age: number): string {
  if (age === 0) return 'from this second';
  return age > 0 ? `${age} s old` : `${-age} s in the future`;
}

function base64OfHex(hex: string): string {
  return btoa(String.fromCharCode(...(hex.match(/../g) ?? []).map((h) => Number.parseInt(h, 16))));
}

/** Tries the usual mistakes, in the order they are met in practice, when no signature matches. */
function mismatch(
  body: Uint8Array,
  read: ReturnType<typeof readStandardWebhookHeaders>,
  secret: string,
  verify: Verify,
): Omit<Extract<StandardDiagnosis, { valid: false }>, 'valid'> {
  const matches = (b: Uint8Array | string, s: string) => verify(b, s).valid;
  if (secret.trim() !== secret && matches(body, secret.trim())) {
    return {
      cause: 'secret_whitespace',
      message:
        'invalid: the secret has whitespace around it (a copied newline?). Without it, the signature matches.',
    };
  }
  const text = new TextDecoder().decode(body);
  if (/\r?\n$/.test(text) && matches(text.replace(/\r?\n$/, ''), secret)) {
    return {
      cause: 'trailing_newline',
      message:
        'invalid: the body ends with a newline that was not sent (an editor or echo adds one). Without it, the signature matches.',
    };
  }
  try {
    const compact = JSON.stringify(JSON.parse(text));
    if (compact !== text && matches(compact, secret)) {
      return {
        cause: 'reformatted_body',
        message:
          'invalid: this body was re-formatted (parsed and serialised again). The signature matches the compact original: verify the raw bytes as received.',
      };
    }
  } catch {
    // not JSON: nothing to re-format
  }
  // A hand-written signer that keys the HMAC with the secret's text, as X-Service-Signature does,
  // rather than with the base64-decoded bytes the Standard Webhooks form uses.
  const signedContent = new Uint8Array([
    ...new TextEncoder().encode(`${read.id}.${read.timestamp}.`),
    ...body,
  ]);
  const asText = `v1,${base64OfHex(sign(signedContent, secret))}`;
  if (typeof read.signature === 'string' && read.signature.split(' ').includes(asText)) {
    return {
      cause: 'secret_as_text',
      message:
        "invalid: the signature was made with the secret's text as the HMAC key. The Standard Webhooks form keys it with the bytes the base64 after whsec_ decodes to.",
    };
  }
  const service = read.serviceSignature;
  if (typeof service === 'string' && verifySignature(body, service, secret).valid) {
    return {
      cause: 'headers_altered',
      message:
        'invalid: the secret is right (X-Service-Signature matches the body) but webhook-signature does not: webhook-id or webhook-timestamp was changed after signing (a proxy?), or the headers belong to another delivery.',
    };
  }
  return {
    cause: 'wrong_secret',
    message:
      "invalid: no usual mistake explains it. Most likely the secret is another endpoint's (each has its own; after a rotation's grace period the old one no longer signs), or the body is not the bytes that were sent.",
  };
}
