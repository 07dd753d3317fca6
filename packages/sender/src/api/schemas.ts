/**
 * The management API's request and response shapes as zod schemas: requests are validated with
 * them, and the OpenAPI document is generated from them, so the two cannot drift apart.
 * Requests are strict (an unknown field is a 400 naming it, as Stripe does), so a typo never
 * silently does nothing.
 */
import { compilePlainCheck, EVENT_NAMES } from '@linkhooks/protocol';
import { z } from 'zod';
import { DELIVERY_STATUSES, FAILURE_KINDS } from '../domain/delivery-state.js';
import { DEFAULT_GRACE_SECONDS, MAX_GRACE_SECONDS } from '../domain/secret-rotation.js';
import { REMAINING_COUNTED_AT_MOST } from '../engine/endpoint-operations.js';
import { EVENT_ID_FORM, SEARCH_KEY_MAX_CHARS } from '../engine/event-input.js';
import { ATTEMPTS_SHOWN, EVENT_SCAN } from '../store/log-page-sql.js';
import { pageCursor, pageLimit } from './page-cursor.js';
import type { BodySchema } from './parse-body.js';

const eventName = z.enum(EVENT_NAMES);
const isoTime = z.iso.datetime().describe('ISO 8601 UTC');
const nullableTime = isoTime.nullable();

/**
 * A string field stored as text: PostgreSQL's text holds no NUL character, so one is refused here
 * with a 400 naming the field, never a database error's 500.
 */
export const withoutNul = <T extends z.ZodString>(field: T, name: string) =>
  field.refine((text) => !text.includes('\0'), `${name} must not contain a NUL character (\\u0000)`);

export const endpointCreateBody = z
  .strictObject({
    url: z.string().min(1).max(2048).describe('Absolute HTTPS URL of the receiver'),
    events: z.array(eventName).min(1).max(EVENT_NAMES.length).describe('The events to deliver'),
    description: withoutNul(z.string().max(500), 'description').nullable().optional(),
    standard_webhooks: z
      .boolean()
      .optional()
      .describe(
        'Also send webhook-id, webhook-timestamp and webhook-signature (Standard Webhooks) on every attempt, beside X-Service-Signature. Default false',
      ),
  })
  .meta({ id: 'EndpointCreate' });

export const endpointUpdateBody = z
  .strictObject({
    url: endpointCreateBody.shape.url.optional(),
    events: endpointCreateBody.shape.events.optional(),
    description: endpointCreateBody.shape.description,
    standard_webhooks: endpointCreateBody.shape.standard_webhooks.describe(
      'Turn the Standard Webhooks headers on or off. Turning them on needs a secret of today’s form: an endpoint created before that answers 400 secret_rotation_required until its secret is rotated',
    ),
  })
  .refine((b) => Object.keys(b).length > 0, {
    message: 'give at least one of url, events, description, standard_webhooks',
  })
  .meta({ id: 'EndpointUpdate' });

export const enableBody = z
  .strictObject({
    replay_skipped: z
      .boolean()
      .optional()
      .describe('Also deliver the events recorded as skipped while the endpoint was disabled'),
  })
  .meta({ id: 'EndpointEnable' });

const graceMessage = `grace_period_seconds must be a whole number of seconds from 0 (end the old secret at once) to ${MAX_GRACE_SECONDS} (7 days)`;

export const rotateBody = z
  .strictObject({
    grace_period_seconds: z
      .number({ error: graceMessage })
      .int({ error: graceMessage })
      .min(0, { error: graceMessage })
      .max(MAX_GRACE_SECONDS, { error: graceMessage })
      .optional()
      .describe(
        `How long the replaced secret keeps signing: 0 to ${MAX_GRACE_SECONDS} s, default ${DEFAULT_GRACE_SECONDS} (24 hours)`,
      ),
  })
  .meta({ id: 'SecretRotate' });

export const testBody = z
  .strictObject({
    event: eventName.optional().describe('One of the endpoint’s events; its first one by default'),
  })
  .meta({ id: 'EndpointTest' });

export const deliveriesQuery = z.strictObject({
  status: z.enum(DELIVERY_STATUSES).optional(),
  event: eventName
    .optional()
    .describe(
      `Deliveries of this event only. Such a page reads at most ${EVENT_SCAN.toLocaleString('en-US')} deliveries of each status from its cursor: it may hold fewer than \`limit\`, even none, with a \`next_cursor\` to read on from; follow it until it is null`,
    ),
  q: z
    .string()
    .min(1)
    .max(SEARCH_KEY_MAX_CHARS)
    .optional()
    .describe(
      'Only the deliveries of the events this names, exactly: an event id (ours, evt_…, or the event_id you published with), a click_id or a conversion_id',
    ),
  cursor: pageCursor('dlv'),
  limit: pageLimit(100, 20),
});

export const ingestBody = z
  .strictObject({
    account_id: withoutNul(z.string().min(1).max(100), 'account_id'),
    event: eventName,
    data: z.record(z.string(), z.unknown()).describe('The event data, as the event reference lists it'),
    timestamp: z.string().optional().describe('YYYY-MM-DDThh:mm:ssZ; now by default'),
    event_id: z
      .string()
      .regex(
        EVENT_ID_FORM,
        'event_id must be 1 to 200 visible ASCII characters (letters, digits, punctuation; no spaces)',
      )
      .optional()
      .describe(
        'The platform’s own id of the event, unique per account: a repeat while the first is kept ' +
          'answers 200 with the first one’s event_id and deliveries, and stores nothing',
      ),
  })
  .meta({ id: 'IngestEvent' });
export type IngestBody = z.infer<typeof ingestBody>;
/** The ingest body with its plain check (parse-body.ts): what both ingest routes parse with. */
export const ingestBodySchema: BodySchema<IngestBody> = {
  schema: ingestBody,
  plain: compilePlainCheck(ingestBody),
};

export const recoverBody = z
  .strictObject({
    since: isoTime.describe('Recover failed deliveries created at or after this time (ISO 8601 UTC)'),
    until: isoTime.optional().describe('…and before this time; now by default'),
  })
  .meta({ id: 'EndpointRecover' });

export const recoverResultSchema = z
  .object({
    recovered: z.number().int().describe('Failed deliveries scheduled for one more attempt now'),
    remaining: z
      .number()
      .int()
      .describe(
        `Failed deliveries in the range still to recover, counted up to ${REMAINING_COUNTED_AT_MOST}: call again while above 0`,
      ),
  })
  .meta({ id: 'RecoverResult' });

export const endpointSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(eventName),
    description: z.string().nullable(),
    standard_webhooks: z.boolean().describe('Attempts also carry the Standard Webhooks headers'),
    previous_secret_expires_at: nullableTime.describe(
      'While a rotation’s grace lasts: when the replaced secret stops signing (null otherwise)',
    ),
    enabled: z.boolean(),
    consecutive_failures: z.number().int(),
    disabled_reason: z
      .string()
      .nullable()
      .describe('consecutive_failures, or gone (the receiver answered 410 and the service disables on it)'),
    disabled_at: nullableTime,
    paused: z.boolean().describe('Paused by the account: deliveries wait, unattempted, until resumed'),
    paused_at: nullableTime,
    status: z
      .enum(['active', 'paused', 'disabled'])
      .describe('disabled (failing, or paused too) wins over paused; active otherwise'),
    created_at: isoTime,
    updated_at: isoTime,
  })
  .meta({ id: 'Endpoint' });

export const endpointWithSecretSchema = endpointSchema
  .extend({ secret: z.string().describe('whsec_…: the HMAC key; shown on create and on request') })
  .meta({ id: 'EndpointWithSecret' });

export const secretSchema = z
  .object({
    secret: z.string(),
    previous_secret_expires_at: nullableTime.describe(
      'While a rotation’s grace lasts: when the replaced secret stops signing. Until then X-Service-Signature is still signed with it and webhook-signature carries both',
    ),
  })
  .meta({ id: 'EndpointSecret' });

export const endpointListSchema = z.object({ data: z.array(endpointSchema) }).meta({ id: 'EndpointList' });

export const deliverySchema = z
  .object({
    id: z.string(),
    event_id: z.string(),
    endpoint_id: z.string(),
    event: z.string(),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.number().int(),
    next_attempt_at: nullableTime,
    last_failure_kind: z.enum(FAILURE_KINDS).nullable(),
    last_status_code: z.number().int().nullable(),
    test: z
      .boolean()
      .describe('A test delivery (POST /v1/endpoints/{id}/test); its attempts carry X-Service-Test: 1'),
    created_at: isoTime,
    updated_at: isoTime,
  })
  .meta({ id: 'Delivery' });

export const attemptSchema = z
  .object({
    number: z
      .number()
      .int()
      .describe(
        'Every attempt of the delivery counted: 1..6 on the retry schedule (a retry by hand while it waits takes one of them), then on for retries by hand after it failed',
      ),
    started_at: isoTime,
    duration_ms: z.number().int(),
    status_code: z.number().int().nullable(),
    failure_kind: z.enum(FAILURE_KINDS).nullable(),
    error_message: z.string().nullable(),
    response_snippet: z.string().nullable().describe('At most 4 KiB of the response body'),
    next_attempt_at: nullableTime,
    request_headers: z.record(z.string(), z.string()),
  })
  .meta({ id: 'Attempt' });

export const deliveryDetailSchema = z
  .object({
    delivery: deliverySchema,
    request_body: z.string().describe('The exact body every attempt sends'),
    attempts: z
      .array(attemptSchema)
      .describe(
        `The attempts the delivery keeps, its latest ${ATTEMPTS_SHOWN}, oldest first; the delivery's \`attempts\` counts every one made`,
      ),
  })
  .meta({ id: 'DeliveryDetail' });

export const deliveryPageSchema = z
  .object({ data: z.array(deliverySchema), next_cursor: z.string().nullable() })
  .meta({ id: 'DeliveryPage' });

export const publishResultSchema = z
  .object({ event_id: z.string(), deliveries: z.array(deliverySchema) })
  .meta({ id: 'PublishResult' });

export const enableResultSchema = z
  .object({ endpoint: endpointSchema, resumed: z.number().int(), replayed: z.number().int() })
  .meta({ id: 'EnableResult' });

export const eventTypesSchema = z
  .object({
    data: z.array(
      z.object({
        name: eventName,
        description: z.string(),
        schema: z.record(z.string(), z.unknown()).describe('JSON Schema (draft 2020-12) of the delivery'),
      }),
    ),
  })
  .meta({ id: 'EventTypeList' });

export const errorSchema = z
  .object({
    error: z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() }),
  })
  .meta({ id: 'Error' });

export const batchResultSchema = z
  .object({
    results: z.array(
      z.union([
        publishResultSchema.extend({
          status: z
            .union([z.literal(202), z.literal(200)])
            .describe('200: a repeated event_id; nothing stored'),
        }),
        errorSchema.extend({
          status: z.number().int().describe('The status this event alone would answer with'),
        }),
      ]),
    ),
  })
  .meta({ id: 'IngestBatchResult' });
