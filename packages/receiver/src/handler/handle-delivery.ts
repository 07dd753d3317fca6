/**
 * The one handler every adapter is thin over: method check, raw body, empty-POST setup check,
 * signature (in the scheme the options name, design D44), envelope, idempotency, dispatch, and the
 * answer (design R17, design D10).
 */
import {
  EVENT_NAMES,
  hasSyncCrypto,
  isKnownEvent,
  readStandardWebhookHeaders,
  SIGNATURE_HEADER,
  standardWebhookKey,
  unusableSecret,
  type VerifyResult,
  verifySignature,
  verifySignatureAsync,
  verifyStandardWebhook,
  verifyStandardWebhookAsync,
  type WebhookEvent,
} from '@linkhooks/protocol';
import { decodeEvent, verificationError } from '../construct-event.js';
import { isWebhookError, WebhookError } from '../errors.js';
import { idempotencyKey, webhookIdKey } from '../idempotency/key.js';
import { checkIdempotencyOptions, runOnce } from '../idempotency/run-once.js';
import { checkSchemeOptions, standardVerificationError } from '../scheme.js';
import type {
  DeliveryContext,
  DeliveryRequest,
  WebhookHandlers,
  WebhookOptions,
  WebhookResponse,
} from './options.js';

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' } as const;
const RECEIVED: WebhookResponse = { status: 200, headers: JSON_HEADERS, body: '{"received":true}' };
const DUPLICATE: WebhookResponse = {
  status: 200,
  headers: JSON_HEADERS,
  body: '{"received":true,"duplicate":true}',
};
// A webhook-id already handled: acknowledged (the service's own retries reuse the id, and a non-2xx
// would have it retry and count failures), with a code of its own so logs tell it apart (design D44).
const REPLAYED: WebhookResponse = {
  status: 200,
  headers: JSON_HEADERS,
  body: '{"received":true,"duplicate":true,"code":"replayed_webhook_id"}',
};
const HANDLER_NAMES = new Set<string>([...EVENT_NAMES, 'unknown']);

// Any caller can reach a 401, so by default it says no more than this: why a signature failed
// describes the receiver's secrets and body handling, which `onError` tells the app instead.
const INVALID_SIGNATURE_BODY = JSON.stringify({
  error: { code: 'invalid_signature', message: 'Invalid signature.' },
});

/**
 * The answer for an error. Hints say how the receiver is set up, so they are sent only with
 * `exposeHints`; the app gets them through `onError` either way.
 */
function errorResponse(error: WebhookError, exposeHints = false): WebhookResponse {
  const headers: Record<string, string> = { ...JSON_HEADERS };
  if (error.status === 401 && !exposeHints) {
    return { status: 401, headers, body: INVALID_SIGNATURE_BODY };
  }
  const payload: Record<string, unknown> = { code: error.code, message: error.message };
  if (error.hint && exposeHints) payload.hint = error.hint;
  // Sent only after the signature matched: the caller is the service, and the fields are its own.
  if (error.code === 'invalid_payload') payload.details = error.details;
  if (error.code === 'method_not_allowed') headers.allow = 'POST';
  return { status: error.status, headers, body: JSON.stringify({ error: payload }) };
}

function defaultOnError(error: WebhookError): void {
  if (error.status >= 500) {
    console.error(
      `[linkhooks] ${error.code}: ${error.message}${error.hint ? ` ${error.hint}` : ''}`,
      error.cause ?? '',
    );
  }
}

const ORDINALS = ['the first', 'the second'];

/**
 * Why the secret option cannot verify, or null: not a string, blank, or the text of an unset
 * variable (which anyone could sign with), or for the Standard Webhooks scheme not base64. In a
 * list (a rotation's [new, old]), which entry: the old one's variable is the one forgotten.
 */
function secretProblem(secret: unknown, standard: boolean): string | null {
  // The Standard Webhooks form signs with the secret's base64-decoded bytes: one that does not
  // decode would refuse every delivery, so it is refused here, once.
  const entryProblem = (entry: unknown) =>
    unusableSecret(entry) ??
    (standard && standardWebhookKey(entry as string) === null
      ? 'It is not a Standard Webhooks secret: whsec_ followed by base64, as the endpoint shows it.'
      : null);
  if (!Array.isArray(secret)) return entryProblem(secret);
  if (secret.length === 0) return 'The secret list is empty.';
  for (const [at, entry] of secret.entries()) {
    const problem = entryProblem(entry);
    if (problem) return `In the secret list, entry ${at} (${ORDINALS[at] ?? `number ${at + 1}`}): ${problem}`;
  }
  return null;
}

/** Checks options when the adapter is created, so a misconfigured app fails at start-up, not per request. */
function checkOptions(options: WebhookOptions): void {
  if (typeof options !== 'object' || options === null) throw new TypeError('linkhooks: options are required');
  const problem = secretProblem(options.secret, options.scheme === 'standard-webhooks');
  if (problem) {
    // The hint is not printed everywhere (Deno shows the message alone): the message names the fix too.
    throw new WebhookError(
      'invalid_secret',
      `linkhooks: ${problem} Pass the endpoint's signing secret (whsec_…), for example from LINKHOOKS_SECRET.`,
      {
        hint: 'Pass the endpoint secret shown when the endpoint was created, e.g. process.env.LINKHOOKS_SECRET.',
      },
    );
  }
  for (const name of Object.keys(options.on ?? {})) {
    if (!HANDLER_NAMES.has(name)) {
      throw new TypeError(
        `linkhooks: no event is named "${name}". Handlers: ${[...HANDLER_NAMES].join(', ')}.`,
      );
    }
  }
  checkSchemeOptions(options);
  if (options.idempotency) checkIdempotencyOptions(options.idempotency);
  const max = options.maxBodyBytes;
  if (max !== undefined && !(Number.isInteger(max) && max > 0)) {
    throw new TypeError(
      `linkhooks: \`maxBodyBytes\` must be a whole number of bytes above 0, got ${String(max)}`,
    );
  }
}

function firstHeader(value: string | readonly string[] | null | undefined): string | undefined {
  if (typeof value === 'string') return value;
  return undefined;
}

function context(
  request: DeliveryRequest,
  rawBody: Uint8Array | string,
  secretIndex: number,
  webhookId: string | undefined,
): DeliveryContext {
  const attempt = Number(firstHeader(request.header('x-service-attempt')));
  return {
    rawBody,
    secretIndex,
    eventId: firstHeader(request.header('x-service-event-id')),
    deliveryId: firstHeader(request.header('x-service-delivery-id')),
    attempt: Number.isInteger(attempt) && attempt > 0 ? attempt : undefined,
    idempotencyKey: undefined,
    webhookId,
    test: firstHeader(request.header('x-service-test')) === '1',
  };
}

async function dispatch(
  handlers: WebhookHandlers,
  event: WebhookEvent,
  ctx: DeliveryContext,
  options: WebhookOptions,
): Promise<WebhookResponse> {
  // An event the sender names "unknown" is not in the catalogue: it goes to the unknown handler too.
  const name = isKnownEvent(event) ? event.event : 'unknown';
  const handler = (
    handlers as Record<string, ((e: WebhookEvent, c: DeliveryContext) => unknown) | undefined>
  )[name];
  // Events without a handler, unknown names included, are acknowledged (design D8).
  if (!handler) return RECEIVED;
  const run = async () => {
    try {
      await handler(event, ctx);
    } catch (cause) {
      throw new WebhookError(
        'handler_error',
        'The event handler failed; the service will retry the delivery.',
        {
          cause,
        },
      );
    }
  };
  if (!options.idempotency) {
    await run();
    return RECEIVED;
  }
  const store = options.idempotency;
  const key = await idempotencyKey(event, ctx.rawBody);
  ctx.idempotencyKey = key;
  if (ctx.webhookId === undefined) {
    const result = await runOnce(store, key, run);
    return result.status === 'duplicate' ? DUPLICATE : RECEIVED;
  }
  // The webhook-id is claimed around the content key, not instead of it: a replayed request stops
  // at the first claim, and click_id / conversion_id still de-duplicate across events (design D44).
  const outer = await runOnce(store, webhookIdKey(ctx.webhookId), () => runOnce(store, key, run));
  if (outer.status === 'duplicate') return REPLAYED;
  return outer.value.status === 'duplicate' ? DUPLICATE : RECEIVED;
}

/**
 * Builds the shared handler from adapter options. Adapters call it with their request's method,
 * header reader and raw-body reader, and write the `WebhookResponse` it resolves to.
 */
export function createDeliveryHandler(
  options: WebhookOptions,
): (request: DeliveryRequest) => Promise<WebhookResponse> {
  checkOptions(options);
  const handlers = options.on ?? {};
  const onError = options.onError ?? defaultOnError;
  const secret = options.secret;
  const exposeHints = options.exposeHints === true;
  const standard = options.scheme === 'standard-webhooks';
  const clock = options.clock ?? { now: () => Date.now() };
  const tolerance =
    options.toleranceSeconds === undefined ? {} : { toleranceSeconds: options.toleranceSeconds };

  return async function handleDelivery(request) {
    try {
      if (request.method !== 'POST') {
        throw new WebhookError('method_not_allowed', `Deliveries are POST requests; got ${request.method}.`);
      }
      const rawBody = await request.readBody();
      // An empty POST is the setup check: answer 200 and run nothing (design R18).
      if (rawBody.length === 0) return RECEIVED;
      let secretIndex: number;
      let webhookId: string | undefined;
      if (standard) {
        // Only these headers count here: X-Service-Signature is never a fallback (design D44).
        const headers = readStandardWebhookHeaders((name) => request.header(name));
        const verifyOptions = { ...tolerance, now: clock.now() };
        const verified = hasSyncCrypto
          ? verifyStandardWebhook(rawBody, headers, secret, verifyOptions)
          : await verifyStandardWebhookAsync(rawBody, headers, secret, verifyOptions);
        if (!verified.valid) throw standardVerificationError(verified);
        secretIndex = verified.secretIndex;
        webhookId = verified.id;
      } else {
        const signature = request.header(SIGNATURE_HEADER.toLowerCase());
        const verified: VerifyResult = hasSyncCrypto
          ? verifySignature(rawBody, signature, secret)
          : await verifySignatureAsync(rawBody, signature, secret);
        if (!verified.valid) throw verificationError(verified);
        secretIndex = verified.secretIndex;
      }
      const event = decodeEvent(rawBody);
      return await dispatch(handlers, event, context(request, rawBody, secretIndex, webhookId), options);
    } catch (error) {
      const webhookError = isWebhookError(error)
        ? error
        : new WebhookError('handler_error', 'The webhook handler failed unexpectedly.', { cause: error });
      try {
        onError(webhookError);
      } catch {
        // A failing error hook must not turn a clean answer into a crash.
      }
      return errorResponse(webhookError, exposeHints);
    }
  };
}

/**
 * The answer to a delivery that reached an adapter whose options were refused when it was first
 * used (the Next.js adapters check them then, not at import): told to `onError`, or logged, as
 * every delivery that was not acknowledged is.
 */
export function refusedOptions(error: WebhookError, options: WebhookOptions): WebhookResponse {
  try {
    (options.onError ?? defaultOnError)(error);
  } catch {
    // As in handleDelivery: a failing error hook does not change the answer.
  }
  return errorResponse(error, options.exposeHints === true);
}

export { errorResponse };
