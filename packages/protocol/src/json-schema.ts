import { z } from 'zod';
import { EVENT_NAMES, type EventName } from './events.js';
import { envelopeSchema, eventSchemas } from './schemas.js';

type JsonSchema = Record<string, unknown>;

function toJsonSchema(schema: z.ZodType, id: string, title: string): JsonSchema {
  return {
    $id: `https://linkhooks.dev/schemas/${id}.json`,
    title,
    ...z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'output', unrepresentable: 'any' }),
  };
}

/**
 * JSON Schema (draft 2020-12) of each event's full envelope, for docs and for receivers not
 * written in TypeScript. Also shipped as files: `@linkhooks/protocol/schemas/<event>.json`.
 *
 * @example
 * const schema = eventJsonSchema('click');
 */
export function eventJsonSchema(name: EventName): JsonSchema {
  return toJsonSchema(eventSchemas[name], name, `linkhooks ${name} delivery`);
}

/** JSON Schema of the generic envelope (design R4). */
export function envelopeJsonSchema(): JsonSchema {
  return toJsonSchema(envelopeSchema, 'envelope', 'linkhooks delivery envelope');
}

/** Every event's JSON Schema, keyed by event name. */
export function eventJsonSchemas(): Record<EventName, JsonSchema> {
  return Object.fromEntries(EVENT_NAMES.map((n) => [n, eventJsonSchema(n)])) as Record<EventName, JsonSchema>;
}
