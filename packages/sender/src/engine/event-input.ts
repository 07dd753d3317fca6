/** An event as the platform publishes it, checked against the protocol's schemas and made into bytes. */
import { EVENT_NAMES, formatTimestamp, isEventName, parseEvent } from '@linkhooks/protocol';
import { newId } from '../domain/ids.js';
import { SenderError } from '../errors.js';
import type { EventRecord } from '../store/records.js';
import { eventBytes } from './event-bytes.js';

/** What an account id can be: what the stores can keep and the management API can name. */
const accountIdOk = (id: unknown): id is string =>
  typeof id === 'string' && id.length >= 1 && id.length <= 100 && !id.includes('\0');

export interface PublishInput {
  event: string;
  data: unknown;
  /** Defaults to now, in the envelope's `YYYY-MM-DDThh:mm:ssZ` form. */
  timestamp?: string;
  /**
   * The platform's own id of this event (design D36): 1 to 200 visible ASCII characters. Publishing
   * it again while the first is kept stores nothing and answers the first publish's event id and
   * deliveries, with `duplicate: true`.
   */
  eventId?: string;
}

/** What a platform's event id may be: 1 to 200 visible ASCII characters (design D36). */
export const EVENT_ID_FORM = /^[\x21-\x7e]{1,200}$/;

/**
 * `now`'s envelope timestamp (whole seconds): formatted once per second, as the events of a batch,
 * and those of a second at click-stream rates, share it. Date's formatting was a fortieth of a
 * batch ingest's CPU.
 */
let formatted = { second: Number.NaN, text: '' };
export function timestampOf(now: number): string {
  // Whole milliseconds only: Date rounds a fraction toward zero, which a second's floor does not
  // below 0 (and a float next to a whole second may land in the next one).
  if (!Number.isInteger(now)) return formatTimestamp(now);
  const second = Math.floor(now / 1000);
  if (second !== formatted.second) formatted = { second, text: formatTimestamp(now) };
  return formatted.text;
}

/**
 * How deep an event's data may nest: its own fields are one level, and extra fields of the
 * platform's own rarely go far. Tens of thousands of levels (under the body limit) overflowed the
 * stack where the event is written out, and a batch holding one answered 500 for all its items.
 */
export const MAX_DATA_DEPTH = 32;

/**
 * The largest body an event may have, as every attempt sends it ({event, timestamp, data}), however
 * it was published: the single ingest route, a batch's item or the library.
 */
export const MAX_EVENT_BODY_BYTES = 256 * 1024;

/** Whether `value` nests objects or arrays more than `limit` deep; walked without recursion. */
function deeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [item, depth] = next;
    if (typeof item !== 'object' || item === null) continue;
    if (depth >= limit) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** The event's record, with the exact bytes every attempt will send (design I1), or a SenderError. */
export function buildEvent(accountId: string, input: PublishInput, now: number): EventRecord {
  if (!accountIdOk(accountId)) {
    throw new SenderError(
      'invalid_request',
      'the account id must be a string of 1 to 100 characters, without NUL',
    );
  }
  if (typeof input !== 'object' || input === null) {
    throw new SenderError('invalid_event', `an event must be an object: {event, data, timestamp?}`);
  }
  if (!isEventName(input?.event)) {
    throw new SenderError('invalid_event', `event must be one of: ${EVENT_NAMES.join(', ')}`);
  }
  if (deeperThan(input.data, MAX_DATA_DEPTH)) {
    throw new SenderError('invalid_event', `data must not be nested more than ${MAX_DATA_DEPTH} levels deep`);
  }
  const envelope = {
    event: input.event,
    timestamp: input.timestamp ?? timestampOf(now),
    data: input.data,
  };
  const parsed = parseEvent(envelope);
  if (!parsed.success) {
    const first = parsed.issues[0];
    throw new SenderError(
      'invalid_event',
      `invalid ${input.event} event at ${first?.path.join('.')}: ${first?.message}`,
      {
        details: parsed.issues.map((i) => ({ path: i.path, message: i.message })),
      },
    );
  }
  const flags = (envelope.data as { fraud_flags?: unknown[] }).fraud_flags;
  if (flags?.some((f) => typeof f !== 'string')) {
    // design D7: the sender emits strings; receivers accept anything.
    throw new SenderError('invalid_event', 'fraud_flags must be strings');
  }
  if (
    input.eventId !== undefined &&
    (typeof input.eventId !== 'string' || !EVENT_ID_FORM.test(input.eventId))
  ) {
    throw new SenderError(
      'invalid_request',
      'event_id must be 1 to 200 visible ASCII characters (letters, digits, punctuation; no spaces)',
    );
  }
  const body = eventBytes(JSON.stringify(envelope));
  if (body.byteLength > MAX_EVENT_BODY_BYTES) {
    throw new SenderError(
      'payload_too_large',
      `the payload delivered for this event ({event, timestamp, data}) would be ${Math.ceil(body.byteLength / 1024)} KiB; it may be at most ${MAX_EVENT_BODY_BYTES / 1024} KiB`,
    );
  }
  return {
    id: newId('evt', now),
    accountId,
    name: input.event,
    body,
    createdAt: now,
    ...(input.eventId !== undefined ? { idempotencyKey: input.eventId } : {}),
    ...searchKeysOf(envelope.data),
  };
}

/** The longest search the log takes (the API's `q`), and so the longest id worth keeping as a key. */
export const SEARCH_KEY_MAX_CHARS = 200;

/**
 * An id the log can be searched by: one a search can name, and one the index takes. PostgreSQL's
 * text holds no NUL character and its index no entry over some 2.7 kB: such an id is still in the
 * event's bytes, delivered as sent, but is not a search key.
 */
const searchable = (id: unknown): id is string =>
  typeof id === 'string' && id.length > 0 && id.length <= SEARCH_KEY_MAX_CHARS && !id.includes('\0');

/** The ids the log can be searched by (design D47), when the data carries them as strings. */
function searchKeysOf(data: unknown): Pick<EventRecord, 'clickId' | 'conversionId'> {
  const { click_id, conversion_id } = data as { click_id?: unknown; conversion_id?: unknown };
  return {
    ...(searchable(click_id) ? { clickId: click_id } : {}),
    ...(searchable(conversion_id) ? { conversionId: conversion_id } : {}),
  };
}
