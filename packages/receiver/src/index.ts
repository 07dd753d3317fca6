/**
 * @module
 * `@linkhooks/receiver`: verify and handle linkhooks deliveries. This entry holds the framework-free
 * core — `verifySignature`, `constructEvent`, `WebhookError`, idempotency — and the event types.
 * Deliveries are verified by X-Service-Signature, or with `scheme: 'standard-webhooks'` by the
 * Standard Webhooks headers with a timestamp tolerance.
 * Framework adapters live in subpaths: `/express`, `/fastify`, `/next`, `/node`, `/fetch`; the Redis
 * idempotency store in `/redis`; test helpers in `/testing`.
 */
export {
  type AlertTriggeredEvent,
  type ClickEvent,
  type ConversionEvent,
  type DataOf,
  DEFAULT_TOLERANCE_SECONDS,
  EVENT_NAMES,
  type EventName,
  type EventOf,
  isKnownEvent,
  type KnownEvent,
  type LinkCreatedEvent,
  type LinkDeletedEvent,
  type LinkUpdatedEvent,
  type RawBody,
  readStandardWebhookHeaders,
  SIGNATURE_HEADER,
  type SignatureHeader,
  type StandardVerifyFailureReason,
  type StandardVerifyOptions,
  type StandardVerifyResult,
  type StandardWebhookHeaders,
  type UnknownEvent,
  type UnknownEventName,
  type VerifyFailureReason,
  type VerifyResult,
  verifySignature,
  verifySignatureAsync,
  verifyStandardWebhook,
  verifyStandardWebhookAsync,
  type WebhookEvent,
} from '@linkhooks/protocol';
export { constructEvent, constructEventAsync } from './construct-event.js';
export { isWebhookError, WEBHOOK_ERROR_STATUS, WebhookError, type WebhookErrorCode } from './errors.js';
export { createDeliveryHandler } from './handler/handle-delivery.js';
export type {
  DeliveryContext,
  DeliveryRequest,
  WebhookHandlers,
  WebhookOptions,
  WebhookResponse,
} from './handler/options.js';
export { idempotencyKey, webhookIdKey } from './idempotency/key.js';
export {
  createMemoryStore,
  type MemoryIdempotencyStore,
  type MemoryStoreOptions,
  type MemoryStoreStats,
  type MemoryStoreWarning,
} from './idempotency/memory-store.js';
export { type IdempotencyOptions, type RunOnceResult, runOnce } from './idempotency/run-once.js';
export {
  type ClaimResult,
  DEFAULT_COMPLETED_TTL_MS,
  DEFAULT_IN_FLIGHT_TTL_MS,
  type IdempotencyStore,
} from './idempotency/store.js';
export type {
  HeaderSource,
  ReceiverClock,
  Scheme,
  StandardWebhooksOptions,
  XServiceSignatureOptions,
} from './scheme.js';
