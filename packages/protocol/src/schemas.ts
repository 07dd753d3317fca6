/**
 * zod schemas of the delivery envelope and each event's data (design R4, design R6), with the
 * shapes the rules leave open as design D7 decides them (link.updated, link.deleted, fraud_flags,
 * metric, condition). Every object is open: unknown fields pass through, so a field added to the
 * wire never breaks a receiver (design D8).
 */
import { z } from 'zod';
import type { EventName } from './events.js';
import { isTimestamp } from './timestamp.js';

/** A string union that still accepts any other string: known values autocomplete, new ones parse. */
export type OpenString<Known extends string> = Known | (string & {});

export const KNOWN_METRICS = [
  'clicks',
  'unique_clicks',
  'conversions',
  'revenue',
  'conversion_rate',
] as const;
export const KNOWN_CONDITIONS = ['greater_than', 'less_than'] as const;
export type AlertMetric = OpenString<(typeof KNOWN_METRICS)[number]>;
export type AlertCondition = OpenString<(typeof KNOWN_CONDITIONS)[number]>;

const int = () => z.number().int();

// One check (isTimestamp) does the work; the pattern is only declared for the JSON Schema.
export const timestampSchema = z
  .string()
  .refine(isTimestamp, 'timestamp must be a real date written YYYY-MM-DDThh:mm:ssZ')
  .meta({ pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$' })
  .meta({ description: 'Time of the event, ISO 8601 UTC in whole seconds: YYYY-MM-DDThh:mm:ssZ.' });

export const clickDataSchema = z.looseObject({
  click_id: z
    .string()
    .meta({ description: 'Identifier of the click; the idempotency key for click events.' }),
  link_id: int(),
  link_slug: z.string(),
  destination_url: z.string().meta({ description: 'URL the visitor was sent to.' }),
  ip: z.string().meta({ description: 'IP address of the visitor.' }),
  country: z.string().meta({ description: 'Two-letter country code.' }),
  region: z.string(),
  city: z.string(),
  device: z.string().meta({ description: 'Device class, for example mobile.' }),
  browser: z.string(),
  os: z.string(),
  referer: z.string().meta({ description: 'Referring URL; empty when the visit had none.' }),
  is_unique: z.boolean(),
  fraud_flags: z.array(z.unknown()).meta({
    description:
      'Fraud signals. The service sends strings; receivers should accept any element. Often empty.',
  }),
});

export const conversionDataSchema = z.looseObject({
  conversion_id: z
    .string()
    .meta({ description: 'Identifier of the conversion; the idempotency key for conversion events.' }),
  click_id: z.string().meta({ description: 'The click this conversion belongs to.' }),
  link_id: int(),
  link_slug: z.string(),
  revenue: z.number().meta({ description: 'Revenue as a decimal number.' }),
  currency: z.string().meta({ description: 'Currency code, for example USD.' }),
  country: z.string().meta({ description: 'Two-letter country code.' }),
  device: z.string(),
});

const linkStateShape = {
  link_id: int(),
  name: z.string(),
  slug: z.string(),
  is_active: z.boolean(),
  rules_count: int().meta({ description: 'Number of routing rules of the link.' }),
};

export const linkCreatedDataSchema = z.looseObject(linkStateShape);

/** The fields of link.created (the state after the change) plus the names of what changed (design D7). */
export const linkUpdatedDataSchema = z.looseObject({
  ...linkStateShape,
  changed: z.array(z.string()).meta({ description: 'Names of the fields or settings that changed.' }),
});

/** `{link_id, slug}` (design D7). */
export const linkDeletedDataSchema = z.looseObject({ link_id: int(), slug: z.string() });

export const alertTriggeredDataSchema = z.looseObject({
  alert_id: int(),
  alert_name: z.string(),
  metric: z.string().meta({
    description: 'What the alert watches. Known values are listed; others may be added.',
    examples: [...KNOWN_METRICS],
  }) as unknown as z.ZodType<AlertMetric, string>,
  condition: z.string().meta({
    description:
      'How the value is compared with the threshold. Known values are listed; others may be added.',
    examples: [...KNOWN_CONDITIONS],
  }) as unknown as z.ZodType<AlertCondition, string>,
  threshold: z.number(),
  current_value: z.number(),
  link_id: int(),
  link_slug: z.string(),
});

export const dataSchemas = {
  click: clickDataSchema,
  conversion: conversionDataSchema,
  'link.created': linkCreatedDataSchema,
  'link.updated': linkUpdatedDataSchema,
  'link.deleted': linkDeletedDataSchema,
  'alert.triggered': alertTriggeredDataSchema,
} as const satisfies Record<EventName, z.ZodType>;

function envelopeOf<const N extends EventName, D extends z.ZodType>(name: N, data: D) {
  return z.looseObject({ event: z.literal(name), timestamp: timestampSchema, data });
}

/** The full envelope schema of each event: the same structure for all events (design R4). */
export const eventSchemas = {
  click: envelopeOf('click', clickDataSchema),
  conversion: envelopeOf('conversion', conversionDataSchema),
  'link.created': envelopeOf('link.created', linkCreatedDataSchema),
  'link.updated': envelopeOf('link.updated', linkUpdatedDataSchema),
  'link.deleted': envelopeOf('link.deleted', linkDeletedDataSchema),
  'alert.triggered': envelopeOf('alert.triggered', alertTriggeredDataSchema),
} as const;

/** Any envelope, whatever its event: what an event name outside the catalogue is checked against. */
export const envelopeSchema = z.looseObject({
  event: z.string().min(1),
  timestamp: timestampSchema,
  data: z.record(z.string(), z.unknown()),
});

export type EventSchemas = typeof eventSchemas;
export type EventOf<N extends EventName> = z.infer<EventSchemas[N]>;
export type DataOf<N extends EventName> = EventOf<N>['data'];

export type ClickEvent = EventOf<'click'>;
export type ConversionEvent = EventOf<'conversion'>;
export type LinkCreatedEvent = EventOf<'link.created'>;
export type LinkUpdatedEvent = EventOf<'link.updated'>;
export type LinkDeletedEvent = EventOf<'link.deleted'>;
export type AlertTriggeredEvent = EventOf<'alert.triggered'>;

/** An envelope whose event is in the catalogue, typed by its name. */
export type KnownEvent = { [N in EventName]: EventOf<N> }[EventName];

/**
 * The type of an event name outside the catalogue. At run time it is any other non-empty string;
 * the type is a pattern no catalogued name matches, because TypeScript has no "string except these
 * names": so `event.event === 'click'` narrows a `WebhookEvent` to the click alone, with its typed
 * data. It is a `string` wherever one is expected. To compare with a name newer than this version,
 * compare `event.event as string`.
 */
export type UnknownEventName = `${string}\u0000unknown`;

/**
 * An envelope whose event name is not in the catalogue (a newer sender). Returned, not thrown:
 * receivers acknowledge it (design D8). Tell the two apart with `isKnownEvent`.
 */
export interface UnknownEvent {
  event: UnknownEventName;
  timestamp: string;
  data: Record<string, unknown>;
  [key: string]: unknown;
}

export type WebhookEvent = KnownEvent | UnknownEvent;
