/**
 * The signature headers of every request the service sends, deliveries and operator notices alike:
 * X-Service-Signature over the body (design R9), and, when asked, the Standard Webhooks headers
 * (design D32) with the attempt's own time, signed with it.
 */
import { STANDARD_WEBHOOK_HEADERS, sign, signStandardWebhook } from '@linkhooks/protocol';

export interface StandardWebhookSigning {
  /** `webhook-id`: the same on every attempt of one message. */
  id: string;
  /** The secrets whose signatures `webhook-signature` lists, in order. */
  secrets: string[];
  /** The attempt's time (ms): its seconds are the signed `webhook-timestamp`. */
  now: number;
}

/**
 * `content-type`, `x-service-signature` with `secret`, and with `standard` the Standard Webhooks
 * three: a new object each call, which the caller may add to.
 */
export function signatureHeaders(
  body: Uint8Array,
  secret: string,
  standard: StandardWebhookSigning | null,
): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-service-signature': sign(body, secret),
  };
  if (standard) {
    const timestamp = Math.floor(standard.now / 1000);
    headers[STANDARD_WEBHOOK_HEADERS.id] = standard.id;
    headers[STANDARD_WEBHOOK_HEADERS.timestamp] = String(timestamp);
    headers[STANDARD_WEBHOOK_HEADERS.signature] = signStandardWebhook({
      id: standard.id,
      timestamp,
      body,
      secret: standard.secrets,
    });
  }
  return headers;
}
