/**
 * @module
 * A testing kit for receivers: schema-valid sample events, signing, and signed requests for each
 * adapter — so a customer's test suite exercises the real verification path, never a mock of it.
 */
import {
  type DataOf,
  type EventName,
  type EventOf,
  eventSchemas,
  formatTimestamp,
  generateSecret,
  SIGNATURE_HEADER,
  STANDARD_WEBHOOK_HEADERS,
  SVIX_WEBHOOK_HEADERS,
  sampleEventData,
  sampleId,
  sign,
  signAsync,
  signStandardWebhook,
  signStandardWebhookAsync,
} from '@linkhooks/protocol';
import type { Scheme } from './scheme.js';

export { generateSecret, sign, signAsync };

/** Fresh sample data for an event: realistic values, new ids on every call. */
export const sampleData: <N extends EventName>(name: N) => DataOf<N> = sampleEventData;

export interface BuildEventOverrides<N extends EventName> {
  timestamp?: string | Date;
  data?: Partial<DataOf<N>>;
}

/**
 * A schema-valid event envelope with sample data, fields overridable. Throws if the overrides
 * make it invalid, so a test never sends something the service would not.
 *
 * @example
 * const event = buildEvent('click', { data: { country: 'FR' } });
 */
export function buildEvent<N extends EventName>(name: N, overrides: BuildEventOverrides<N> = {}): EventOf<N> {
  const timestamp =
    typeof overrides.timestamp === 'string'
      ? overrides.timestamp
      : formatTimestamp(overrides.timestamp ?? new Date());
  const envelope = { event: name, timestamp, data: { ...sampleData(name), ...overrides.data } };
  const result = eventSchemas[name].safeParse(envelope);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new TypeError(
      `buildEvent(${name}): the overrides make the event invalid at ${issue?.path.join('.')}: ${issue?.message}`,
    );
  }
  return envelope as EventOf<N>;
}

export interface SignedDeliveryInput {
  secret: string;
  /** The event to send; serialised once with JSON.stringify. */
  event?: unknown;
  /** Or the exact body to send (takes precedence over `event`). */
  body?: string | Uint8Array;
  /** Extension headers; defaults are generated. */
  eventId?: string;
  deliveryId?: string;
  attempt?: number;
  /** Mark it a test delivery, as "send test" does: `X-Service-Test: 1`. */
  test?: boolean;
  /**
   * `'standard-webhooks'` adds `webhook-id`, `webhook-timestamp` and `webhook-signature`, as an
   * endpoint with Standard Webhooks turned on receives them; X-Service-Signature is sent as well.
   */
  scheme?: Scheme;
  /** Standard Webhooks: the `webhook-id`. Default: the event id (`eventId`), as the service sends it. */
  webhookId?: string;
  /** Standard Webhooks: the attempt's time, a `Date` or Unix seconds. Default: now. */
  timestamp?: Date | number;
  /** Standard Webhooks: `'svix'` names the headers `svix-id`, `svix-timestamp`, `svix-signature`. */
  headerNames?: 'webhook' | 'svix';
}

/** `body` is a string unless the input gave the body as bytes, so it goes straight into `fetch`. */
export interface SignedDelivery<Body extends string | Uint8Array = string | Uint8Array> {
  body: Body;
  headers: Record<string, string>;
}

type BodyOf<I extends SignedDeliveryInput> = I['body'] extends Uint8Array ? Uint8Array : string;

function bodyOf(input: SignedDeliveryInput): string | Uint8Array {
  if (input.body !== undefined) return input.body;
  if (input.event === undefined) throw new TypeError('signed delivery: pass `event` or `body`');
  return JSON.stringify(input.event);
}

function headersOf(input: SignedDeliveryInput, signature: string, eventId: string): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    [SIGNATURE_HEADER.toLowerCase()]: signature,
    'x-service-event-id': eventId,
    'x-service-delivery-id': input.deliveryId ?? sampleId('dlv_'),
    'x-service-attempt': String(input.attempt ?? 1),
    'user-agent': 'linkhooks-testing',
  };
  if (input.test) headers['x-service-test'] = '1';
  return headers;
}

interface StandardParts {
  id: string;
  timestamp: number;
  names: { id: string; timestamp: string; signature: string };
}

function standardParts(input: SignedDeliveryInput, eventId: string): StandardParts | undefined {
  if (input.scheme !== 'standard-webhooks') {
    if (input.webhookId !== undefined || input.timestamp !== undefined || input.headerNames !== undefined) {
      throw new TypeError(
        'signed delivery: webhookId, timestamp and headerNames need scheme: "standard-webhooks"',
      );
    }
    return undefined;
  }
  const at = input.timestamp ?? new Date();
  // Seconds past the year 5000 are milliseconds (Date.now()): signed as given, the delivery would be
  // refused as malformed, and a test of a stale timestamp would pass for the wrong reason.
  if (typeof at === 'number' && at > 1e11) {
    throw new TypeError(
      `signed delivery: timestamp ${at} looks like milliseconds; pass Unix seconds (Math.floor(Date.now() / 1000)) or a Date`,
    );
  }
  return {
    id: input.webhookId ?? eventId,
    timestamp: at instanceof Date ? Math.floor(at.getTime() / 1000) : at,
    names: input.headerNames === 'svix' ? SVIX_WEBHOOK_HEADERS : STANDARD_WEBHOOK_HEADERS,
  };
}

function withStandard(headers: Record<string, string>, parts: StandardParts, signature: string) {
  headers[parts.names.id] = parts.id;
  headers[parts.names.timestamp] = String(parts.timestamp);
  headers[parts.names.signature] = signature;
  return headers;
}

/**
 * The body and headers of a signed delivery, as the service sends them. Use with supertest,
 * `fastify.inject`, or any HTTP client. With `scheme: 'standard-webhooks'` it carries the
 * Standard Webhooks headers too, signed for `timestamp` (default now).
 *
 * @example
 * const { body, headers } = signedDelivery({ secret, event: buildEvent('click') });
 * await fetch(url, { method: 'POST', headers, body });
 * const stale = signedDelivery({ secret, event, scheme: 'standard-webhooks', timestamp: new Date(Date.now() - 3_600_000) });
 */
export function signedDelivery<I extends SignedDeliveryInput>(input: I): SignedDelivery<BodyOf<I>> {
  const body = bodyOf(input) as BodyOf<I>;
  const eventId = input.eventId ?? sampleId('evt_');
  const parts = standardParts(input, eventId);
  const headers = headersOf(input, sign(body, input.secret), eventId);
  if (!parts) return { body, headers };
  const signature = signStandardWebhook({
    id: parts.id,
    timestamp: parts.timestamp,
    body,
    secret: input.secret,
  });
  return { body, headers: withStandard(headers, parts, signature) };
}

/** {@link signedDelivery} on Web Crypto, for edge runtimes. */
export async function signedDeliveryAsync<I extends SignedDeliveryInput>(
  input: I,
): Promise<SignedDelivery<BodyOf<I>>> {
  const body = bodyOf(input) as BodyOf<I>;
  const eventId = input.eventId ?? sampleId('evt_');
  const parts = standardParts(input, eventId);
  const headers = headersOf(input, await signAsync(body, input.secret), eventId);
  if (!parts) return { body, headers };
  const signature = await signStandardWebhookAsync({
    id: parts.id,
    timestamp: parts.timestamp,
    body,
    secret: input.secret,
  });
  return { body, headers: withStandard(headers, parts, signature) };
}

/**
 * A signed Web `Request`, for `webhookHandler` (`/fetch`) and `webhookRoute` (`/next`).
 *
 * @example
 * const response = await handler(await signedRequest('https://app.test/webhooks', { secret, event: buildEvent('click') }));
 */
export async function signedRequest(url: string, input: SignedDeliveryInput): Promise<Request> {
  const { body, headers } = await signedDeliveryAsync(input);
  return new Request(url, { method: 'POST', headers, body: body as BodyInit });
}
