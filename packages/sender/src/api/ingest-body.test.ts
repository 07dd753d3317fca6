import { EVENT_NAMES, sampleEventData } from '@linkhooks/protocol';
import { describe, expect, it } from 'vitest';
import { ingestBody, ingestBodySchema } from './schemas.js';

const plainIngestBody = ingestBodySchema.plain;

const isPlainIngestBody = (raw: unknown) => plainIngestBody!(raw);

/** A body as the ingest route's JSON parser hands it over. */
const json = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

const valid = () => ({
  account_id: 'acct_1',
  event: 'click',
  data: sampleEventData('click'),
  timestamp: '2026-11-22T09:00:00Z',
  event_id: 'clk-42',
});

/** The check never takes what the schema refuses, and what it takes goes on as the schema would hand it. */
function agrees(raw: unknown) {
  const parsed = ingestBody.safeParse(raw);
  if (isPlainIngestBody(raw)) {
    expect(parsed.success, JSON.stringify(raw)).toBe(true);
    expect(raw).toStrictEqual(parsed.data);
  }
  return { plain: isPlainIngestBody(raw), schema: parsed.success };
}

// A small seeded generator: the same bodies on every run.
function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ODD_VALUES = [
  null,
  0,
  1.5,
  true,
  '',
  'x',
  '\0',
  'a b',
  'é',
  'x'.repeat(100),
  'x'.repeat(101),
  'y'.repeat(200),
  'y'.repeat(201),
  [],
  ['click'],
  {},
  { a: 1 },
  ...EVENT_NAMES,
  'clicks',
];

describe("the ingest body's plain check", () => {
  it('compiles: platform ingest does not fall back to zod for every body', () => {
    expect(plainIngestBody).not.toBeNull();
  });

  it('takes the bodies the platform sends, with and without their optional fields', () => {
    for (const body of [valid(), { ...valid(), timestamp: undefined, event_id: undefined }]) {
      expect(agrees(json(body))).toEqual({ plain: true, schema: true });
    }
    for (const event of EVENT_NAMES) {
      expect(agrees(json({ account_id: 'a', event, data: sampleEventData(event) }))).toEqual({
        plain: true,
        schema: true,
      });
    }
  });

  it('leaves every body the schema refuses to the schema', () => {
    const refused = [
      null,
      [],
      'body',
      { ...valid(), extra: 1 },
      { ...valid(), account_id: '' },
      { ...valid(), account_id: 'a'.repeat(101) },
      { ...valid(), account_id: 'a\0b' },
      { ...valid(), account_id: 7 },
      { ...valid(), event: 'clicks' },
      { ...valid(), data: null },
      { ...valid(), data: [] },
      { ...valid(), data: 'x' },
      { ...valid(), timestamp: 1 },
      { ...valid(), event_id: 'has space' },
      { ...valid(), event_id: 'x'.repeat(201) },
      { ...valid(), event_id: '' },
    ];
    for (const raw of refused) expect(agrees(json(raw))).toEqual({ plain: false, schema: false });
    const missing = ['account_id', 'event', 'data'].map((key) => {
      const body: Record<string, unknown> = valid();
      delete body[key];
      return body;
    });
    for (const raw of missing) expect(agrees(json(raw))).toEqual({ plain: false, schema: false });
  });

  it('leaves to the schema what the schema would hand on changed: a data key __proto__, an object without a prototype', () => {
    const proto = JSON.parse(
      '{"account_id":"a","event":"click","data":{"__proto__":{"x":1},"click_id":"c"}}',
    );
    expect(isPlainIngestBody(proto)).toBe(false);
    const bare = Object.assign(Object.create(null), valid());
    expect(isPlainIngestBody(bare)).toBe(false);
  });

  it('agrees with the schema on 5,000 bodies with fields changed, dropped and added', () => {
    const next = random(20261126);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!;
    let plain = 0;
    let schema = 0;
    for (let i = 0; i < 5_000; i++) {
      const body: Record<string, unknown> = valid();
      for (let changes = 1 + Math.floor(next() * 3); changes > 0; changes--) {
        const key = pick(['account_id', 'event', 'data', 'timestamp', 'event_id', 'other']);
        const what = next();
        if (what < 0.2) delete body[key];
        else body[key] = pick(ODD_VALUES);
      }
      const result = agrees(json(body));
      // From JSON, the check takes exactly what the schema takes: no body falls back for nothing.
      expect(result.plain, JSON.stringify(body)).toBe(result.schema);
      plain += Number(result.plain);
      schema += Number(result.schema);
    }
    // Both kinds were made: the agreement is not one of refusing everything.
    expect(plain).toBeGreaterThan(100);
    expect(5_000 - schema).toBeGreaterThan(100);
  });
});
