import type { z } from 'zod';
import { EVENT_NAMES, type EventName, isEventName } from './events.js';
import { compilePlainCheck, type PlainCheck } from './plain-check.js';
import { envelopeSchema, eventSchemas, type KnownEvent, type WebhookEvent } from './schemas.js';

export type ParseEventResult =
  | { success: true; event: WebhookEvent; known: boolean }
  | { success: false; issues: z.core.$ZodIssue[] };

const plainChecks = Object.fromEntries(
  EVENT_NAMES.map((name) => [name, compilePlainCheck(eventSchemas[name])]),
) as Record<EventName, PlainCheck | null>;
const plainEnvelopeCheck = compilePlainCheck(envelopeSchema);

/**
 * Validates a parsed JSON value as a delivery envelope. A catalogued event is checked against its
 * own schema; any other name against the generic envelope and returned as an unknown event. A valid
 * plain JSON value is returned as it is, not copied (plain-check.ts).
 *
 * @example
 * const result = parseEvent(JSON.parse(text));
 * if (result.success && isKnownEvent(result.event)) console.log(result.event.event);
 */
export function parseEvent(value: unknown): ParseEventResult {
  const name = (value as { event?: unknown } | null)?.event;
  const known = isEventName(name);
  if ((known ? plainChecks[name] : plainEnvelopeCheck)?.(value)) {
    return { success: true, event: value as WebhookEvent, known };
  }
  const result = known ? eventSchemas[name].safeParse(value) : envelopeSchema.safeParse(value);
  if (!result.success) return { success: false, issues: result.error.issues };
  return { success: true, event: result.data as WebhookEvent, known };
}

/**
 * Whether an event is one of the six in the catalogue; narrows to the typed union.
 *
 * @example
 * if (isKnownEvent(event) && event.event === 'click') event.data.click_id;
 */
export function isKnownEvent(event: WebhookEvent): event is KnownEvent {
  return isEventName(event.event);
}
