import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EVENT_NAMES, isEventName } from './events.js';
import { parseEvent } from './parse-event.js';
import { compilePlainCheck } from './plain-check.js';
import { sampleEventData } from './sample-data.js';
import { envelopeSchema, eventSchemas } from './schemas.js';

const TIMESTAMP = '2026-11-22T10:04:05Z';

/** Values of every JSON type and the edges of the rules the schemas use. */
const REPLACEMENTS: unknown[] = [
  undefined,
  null,
  '',
  'x',
  '__proto__',
  TIMESTAMP,
  '2026-02-30T10:04:05Z',
  '2026-11-22 10:04:05',
  0,
  -7,
  1.5,
  2 ** 53,
  Number.MAX_SAFE_INTEGER,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  true,
  false,
  [],
  ['a'],
  [1, {}],
  {},
  { a: 1 },
  JSON.parse('{"__proto__": {"polluted": true}, "a": 1}'),
  Object.create(null),
  new Date(0),
];

/** The schema parseEvent picks: the value's own event name decides. */
const schemaOf = (value: unknown): z.ZodType => {
  const name = (value as { event?: unknown }).event;
  return isEventName(name) ? eventSchemas[name] : envelopeSchema;
};

/** The sample envelope of each event (and one outside the catalogue), then each field replaced. */
function* variants(): Generator<[string, unknown]> {
  for (const name of [...EVENT_NAMES, 'link.archived']) {
    const data = EVENT_NAMES.includes(name as never)
      ? (sampleEventData(name as never) as Record<string, unknown>)
      : { link_id: 1 };
    const envelope = { event: name, timestamp: TIMESTAMP, data };
    yield [name, envelope];
    yield [name, JSON.parse(JSON.stringify(envelope))];
    yield [name, { ...envelope, extra: { nested: [1, 2] } }];
    yield [name, JSON.parse(`{"__proto__": {"x": 1}, ${JSON.stringify(envelope).slice(1)}`)];
    for (const replacement of REPLACEMENTS) {
      for (const key of Object.keys(envelope)) yield [name, withField(envelope, key, replacement)];
      for (const key of [...Object.keys(data), 'added'])
        yield [name, { ...envelope, data: withField(data, key, replacement) }];
    }
  }
}

function withField(object: Record<string, unknown>, key: string, value: unknown) {
  const copy = { ...object };
  if (value === undefined) delete copy[key];
  else copy[key] = value;
  return copy;
}

describe('plain checks of the envelope schemas', () => {
  it('compile for every event and for the generic envelope', () => {
    for (const name of EVENT_NAMES) expect(compilePlainCheck(eventSchemas[name]), name).not.toBeNull();
    expect(compilePlainCheck(envelopeSchema)).not.toBeNull();
  });

  it('say "valid" only where zod accepts the value and returns an equal one, and for every valid JSON value', () => {
    let valid = 0;
    let checked = 0;
    for (const [, value] of variants()) {
      checked++;
      const schema = schemaOf(value);
      const plain = compilePlainCheck(schema)!(value);
      const zod = schema.safeParse(value);
      if (plain) {
        expect(zod.success, JSON.stringify(value)).toBe(true);
        expect(zod.data).toStrictEqual(value);
        valid++;
      }
      // Every value JSON.parse can make and zod accepts takes the plain path.
      const json = JSON.stringify(value);
      if (zod.success && json !== undefined && !copiedProtoKey(value) && plainJson(value))
        expect(plain, json).toBe(true);
    }
    expect(checked).toBeGreaterThan(1000);
    expect(valid).toBeGreaterThan(100);
  });

  it('agree with zod on random data in every field', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...EVENT_NAMES),
        fc.dictionary(fc.string(), fc.jsonValue()),
        (name, extra) => {
          const value = JSON.parse(
            JSON.stringify({
              event: name,
              timestamp: TIMESTAMP,
              data: { ...(sampleEventData(name) as object), ...extra },
            }),
          );
          const zod = eventSchemas[name].safeParse(value);
          const plain = compilePlainCheck(eventSchemas[name])!(value);
          if (plain) expect(zod.data).toStrictEqual(value);
          expect(plain).toBe(zod.success && !copiedProtoKey(value));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('compile to nothing for a construct they do not know, so zod decides', () => {
    expect(compilePlainCheck(z.looseObject({ a: z.email() }))).toBeNull();
    expect(compilePlainCheck(z.object({ a: z.string() }))).toBeNull();
    expect(compilePlainCheck(z.looseObject({ a: z.string().default('x') }))).toBeNull();
    expect(compilePlainCheck(z.looseObject({ a: z.string().regex(/a/g) }))).toBeNull();
    expect(compilePlainCheck(z.looseObject({ a: z.string().trim() }))).toBeNull();
  });
});

describe('plain checks of strict objects, optional fields, enums, lengths and patterns', () => {
  // The constructs of the sender's ingest body, each at its edges.
  const schema = z.strictObject({
    id: z
      .string()
      .min(1)
      .max(5)
      .refine((v) => !v.includes('\0')),
    kind: z.enum(['a', 'b']),
    data: z.record(z.string(), z.unknown()),
    note: z.string().optional(),
    ref: z
      .string()
      .regex(/^[a-z]{1,3}$/)
      .optional(),
    toString: z.string().optional(),
  });
  const check = compilePlainCheck(schema)!;
  const base = { id: 'x', kind: 'a', data: { k: 1 } };
  const FIELD_VALUES = [
    undefined,
    null,
    '',
    'a',
    'b',
    'c',
    'abcde',
    'abcdef',
    'a\0',
    'ABC',
    'abcd',
    1,
    {},
    [],
  ];

  it('compile', () => {
    expect(check).not.toBeNull();
  });

  it('say "valid" exactly where zod accepts a JSON value, and zod then returns it unchanged', () => {
    let valid = 0;
    const keys = [...Object.keys(schema.shape), 'extra'];
    for (const key of keys)
      for (const value of FIELD_VALUES)
        for (const other of keys)
          for (const second of [undefined, 'a', 'abc']) {
            const body = JSON.parse(
              JSON.stringify(withField(withField(base, key, value), other, second)),
            ) as unknown;
            const zod = schema.safeParse(body);
            const plain = check(body);
            if (plain) expect(zod.data, JSON.stringify(body)).toStrictEqual(body);
            expect(plain, JSON.stringify(body)).toBe(zod.success);
            valid += Number(plain);
          }
    expect(valid).toBeGreaterThan(50);
  });

  it('leave an own undefined, a copied __proto__ key and a prototype-less object to zod', () => {
    expect(check({ ...base, note: undefined })).toBe(false);
    expect(check(JSON.parse('{"id":"x","kind":"a","data":{"__proto__":{"k":1}}}'))).toBe(false);
    expect(check(Object.assign(Object.create(null), base))).toBe(false);
    // zod reads a missing member of Object.prototype inherited (a function): refused both ways.
    expect(schema.safeParse(base).success).toBe(false);
    expect(check(base)).toBe(false);
    expect(check({ ...base, toString: 'x' })).toBe(true);
  });
});

describe('parseEvent', () => {
  it('gives the same answer as zod for every variant, and zod’s issues when invalid', () => {
    for (const [, value] of variants()) {
      const zod = schemaOf(value).safeParse(value);
      const result = parseEvent(value);
      expect(result.success).toBe(zod.success);
      if (result.success) expect(result.event).toStrictEqual(zod.data);
      else expect(result.issues).toEqual(zod.error!.issues);
    }
  });
});

/**
 * Whether the envelope or its data has an own `__proto__` key: zod copies both and drops that key,
 * so its answer differs from the value, and the plain check leaves such a value to zod. (A string
 * "__proto__", or the key deeper inside a value zod does not copy, changes nothing.)
 */
function copiedProtoKey(value: unknown): boolean {
  const envelope = value as { data?: unknown } | null;
  if (typeof envelope !== 'object' || envelope === null) return false;
  if (Object.hasOwn(envelope, '__proto__')) return true;
  return (
    typeof envelope.data === 'object' && envelope.data !== null && Object.hasOwn(envelope.data, '__proto__')
  );
}

/** Made only of what JSON.parse makes: plain objects, arrays, strings, finite numbers, booleans, null. */
function plainJson(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(plainJson);
  if (typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return false;
  return Object.values(value).every(plainJson);
}
