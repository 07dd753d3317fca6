import type { EventName, EventOf, UnknownEvent } from '@linkhooks/protocol';
import type { WebhookError } from '../errors.js';
import type { IdempotencyOptions } from '../idempotency/run-once.js';
import type { ReceiverClock, Scheme } from '../scheme.js';

/** What a handler learns about the delivery beyond the event itself. */
export interface DeliveryContext {
  /** The exact bytes that were verified. */
  rawBody: Uint8Array | string;
  /** Which secret matched, when several are configured during a rotation. */
  secretIndex: number;
  /** `X-Service-Event-Id`: stable across every delivery of one event (extension header). */
  eventId: string | undefined;
  /** `X-Service-Delivery-Id`: one event to one endpoint (extension header). */
  deliveryId: string | undefined;
  /** `X-Service-Attempt`: 1 for the first attempt, 6 the schedule's last; retries by hand go on (extension header). */
  attempt: number | undefined;
  /** The idempotency key, when idempotency is on. */
  idempotencyKey: string | undefined;
  /** The verified `webhook-id` in the Standard Webhooks scheme (the event id); otherwise undefined. */
  webhookId: string | undefined;
  /**
   * Whether the delivery is a test one (`X-Service-Test: 1`, sent by the dashboard's and the API's
   * "send test"). The header is not signed: use it to skip side effects, never to grant anything.
   */
  test: boolean;
}

type Handler<E> = (event: E, context: DeliveryContext) => unknown | Promise<unknown>;

/** One handler per event name, typed by it, plus `unknown` for names outside the catalogue. */
export type WebhookHandlers = { [N in EventName]?: Handler<EventOf<N>> } & {
  unknown?: Handler<UnknownEvent>;
};

/** The options every adapter takes (design D9). */
export interface WebhookOptions {
  /** The endpoint secret, or several during a rotation (any one may match). */
  secret: string | readonly string[];
  /**
   * How deliveries are signed. `'x-service-signature'` (the default): HMAC of the body alone.
   * `'standard-webhooks'`: `webhook-id`, `webhook-timestamp` and `webhook-signature` are all
   * required (or their `svix-*` names), the timestamp must be within `toleranceSeconds`, and a
   * delivery carrying only X-Service-Signature is refused. The endpoint must have Standard
   * Webhooks turned on, or every delivery is refused.
   */
  scheme?: Scheme;
  /** Standard Webhooks only: how far `webhook-timestamp` may be from this server's clock. Default 300 s. */
  toleranceSeconds?: number;
  /** Standard Webhooks only: the clock the timestamp is checked against (ms). Default `Date.now()`. */
  clock?: ReceiverClock;
  /** Handlers by event name. Events without one are acknowledged with 200. */
  on?: WebhookHandlers;
  /**
   * Run each delivery's handler at most once to completion (keys on click_id / conversion_id). In
   * the Standard Webhooks scheme the `webhook-id` is claimed first, so a replayed request is
   * answered without running anything.
   */
  idempotency?: IdempotencyOptions;
  /**
   * Told of every delivery that is not acknowledged, with the code, hint and cause. Default: a
   * `console.error` for the receiver's own faults (5xx); signature and payload rejections stay quiet.
   */
  onError?: (error: WebhookError) => void;
  /**
   * Put the hint (what to change) in error answers, and the exact signature failure in 401s.
   * For development only: hints describe your secrets and body handling to whoever calls the
   * route. Default `false`: a 401 says `invalid_signature` and nothing more; `onError` still gets
   * the full reason.
   */
  exposeHints?: boolean;
  /** Largest body read, in bytes; larger ones get 413. Default 1 MiB. */
  maxBodyBytes?: number;
}

/** What the shared handler answers; each adapter writes it in its framework's terms. */
export interface WebhookResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The three things an adapter supplies to the shared handler (design C2). */
export interface DeliveryRequest {
  method: string;
  header(name: string): string | readonly string[] | null | undefined;
  readBody(): Promise<Uint8Array | string>;
}
