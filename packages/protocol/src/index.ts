/**
 * @module
 * The linkhooks wire contract shared by the sender and every receiver: the six events (design R7),
 * their envelope and data schemas (design R4, design R6), the timestamp form, secrets, and HMAC-SHA256
 * signing with constant-time verification (design R9, design R10), and the Standard Webhooks form
 * sent beside it (design D32).
 */

export { toHex } from './encoding.js';
export { EVENT_DESCRIPTIONS, EVENT_NAMES, type EventName, isEventName } from './events.js';
export { hasSyncCrypto, sha256 } from './hmac.js';
export { envelopeJsonSchema, eventJsonSchema, eventJsonSchemas } from './json-schema.js';
export { isKnownEvent, type ParseEventResult, parseEvent } from './parse-event.js';
export { compilePlainCheck, type PlainCheck } from './plain-check.js';
export { sampleEventData, sampleId } from './sample-data.js';
export * from './schemas.js';
export {
  generateSecret,
  isSecretForm,
  isStandardWebhooksSecret,
  SECRET_PREFIX,
  unusableSecret,
} from './secret.js';
export {
  mismatchHint,
  type RawBody,
  SIGNATURE_HEADER,
  type SignatureHeader,
  sign,
  signAsync,
  type VerifyFailureReason,
  type VerifyResult,
  verifySignature,
  verifySignatureAsync,
} from './signature.js';
export {
  DEFAULT_TOLERANCE_SECONDS,
  readStandardWebhookHeaders,
  STANDARD_WEBHOOK_HEADERS,
  type StandardSignInput,
  type StandardVerifyFailureReason,
  type StandardVerifyOptions,
  type StandardVerifyResult,
  type StandardWebhookHeaders,
  SVIX_WEBHOOK_HEADERS,
  signStandardWebhook,
  signStandardWebhookAsync,
  standardWebhookKey,
  verifyStandardWebhook,
  verifyStandardWebhookAsync,
} from './standard-webhooks.js';
export { formatTimestamp, isTimestamp, parseTimestamp } from './timestamp.js';
