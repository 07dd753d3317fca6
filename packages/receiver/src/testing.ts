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
  sampleEventData,
  sampleId,
  sign,
  signAsync,
} from '@linkhooks/protocol';

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

function headersOf(input: SignedDeliveryInput, signature: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    [SIGNATURE_HEADER.toLowerCase()]: signature,
    'x-service-event-id': input.eventId ?? sampleId('evt_'),
    'x-service-delivery-id': input.deliveryId ?? sampleId('dlv_'),
    'x-service-attempt': String(input.attempt ?? 1),
    'user-agent': 'linkhooks-testing',
  };
}

/**
 * The body and headers of a signed delivery, as the service sends them. Use with supertest,
 * `fastify.inject`, or any HTTP client.
 *
 * @example
 * const { body, headers } = signedDelivery({ secret, event: buildEvent('click') });
 * await fetch(url, { method: 'POST', headers, body });
 */
export function signedDelivery<I extends SignedDeliveryInput>(input: I): SignedDelivery<BodyOf<I>> {
  const body = bodyOf(input) as BodyOf<I>;
  return { body, headers: headersOf(input, sign(body, input.secret)) };
}

/** {@link signedDelivery} on Web Crypto, for edge runtimes. */
export async function signedDeliveryAsync<I extends SignedDeliveryInput>(
  input: I,
): Promise<SignedDelivery<BodyOf<I>>> {
  const body = bodyOf(input) as BodyOf<I>;
  return { body, headers: headersOf(input, await signAsync(body, input.secret)) };
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
