/**
 * The ingest body's schema (schemas.ts `ingestBody`) checked without zod, for the bodies that pass
 * it, which then go on as they came. zod's parse of `data` (a record of unknown values) copies
 * every event's data, and was about 8% of a batch's CPU. A body this does not accept goes to the
 * schema, which answers with its issues: this decides nothing the schema would not.
 * ingest-body-check.test.ts holds the two together.
 */
import { EVENT_NAMES } from '@linkhooks/protocol';
import { EVENT_ID_FORM } from '../engine/event-input.js';
import type { IngestBody } from './schemas.js';

const KEYS = new Set(['account_id', 'event', 'data', 'timestamp', 'event_id']);
const NAMES: ReadonlySet<string> = new Set(EVENT_NAMES);

/** An object as JSON.parse makes them. */
const plainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  Object.getPrototypeOf(value) === Object.prototype;

/** Whether `raw` passes the ingest body's schema as it is. False sends it to the schema. */
export function isPlainIngestBody(raw: unknown): raw is IngestBody {
  if (!plainObject(raw)) return false;
  for (const key in raw) if (!KEYS.has(key)) return false;
  const { account_id: account, event, data, timestamp, event_id: eventId } = raw;
  return (
    typeof account === 'string' &&
    account.length >= 1 &&
    account.length <= 100 &&
    !account.includes('\0') &&
    typeof event === 'string' &&
    NAMES.has(event) &&
    plainObject(data) &&
    // The schema's copy of `data` would drop an own `__proto__` key (JSON.parse makes one); the
    // schema decides what such a body becomes.
    !Object.hasOwn(data, '__proto__') &&
    (timestamp === undefined || typeof timestamp === 'string') &&
    (eventId === undefined || (typeof eventId === 'string' && EVENT_ID_FORM.test(eventId)))
  );
}
