import { describe, expect, it } from 'vitest';
import { EVENT_NAMES, type EventName, isEventName } from './events.js';
import { envelopeJsonSchema, eventJsonSchema, eventJsonSchemas } from './json-schema.js';
import { isKnownEvent, parseEvent } from './parse-event.js';
import { dataSchemas, envelopeSchema, eventSchemas } from './schemas.js';

/** The six events of design R7, in its order. */
const SIX_EVENTS = ['click', 'conversion', 'link.created', 'link.updated', 'link.deleted', 'alert.triggered'];

const TIMESTAMP = '2026-11-22T10:04:05Z';

const SAMPLE_DATA: Record<EventName, Record<string, unknown>> = {
  click: {
    click_id: 'clk_01HZX',
    link_id: 42,
    link_slug: 'summer-sale',
    destination_url: 'https://shop.example.com/sale',
    ip: '203.0.113.7',
    country: 'DE',
    region: 'Bavaria',
    city: 'Munich',
    device: 'mobile',
    browser: 'Firefox',
    os: 'Android',
    referer: 'https://news.example.org/',
    is_unique: true,
    fraud_flags: [],
  },
  conversion: {
    conversion_id: 'cnv_9',
    click_id: 'clk_01HZX',
    link_id: 42,
    link_slug: 'summer-sale',
    revenue: 49.9,
    currency: 'EUR',
    country: 'DE',
    device: 'desktop',
  },
  'link.created': { link_id: 42, name: 'Summer sale', slug: 'summer-sale', is_active: true, rules_count: 3 },
  'link.updated': {
    link_id: 42,
    name: 'Summer sale',
    slug: 'summer-sale',
    is_active: false,
    rules_count: 4,
    changed: ['is_active', 'rules'],
  },
  'link.deleted': { link_id: 42, slug: 'summer-sale' },
  'alert.triggered': {
    alert_id: 5,
    alert_name: 'Click spike',
    metric: 'clicks',
    condition: 'greater_than',
    threshold: 1000,
    current_value: 1532.5,
    link_id: 42,
    link_slug: 'summer-sale',
  },
};

function envelope(name: string, data: Record<string, unknown> = SAMPLE_DATA[name as EventName]!) {
  return { event: name, timestamp: TIMESTAMP, data };
}

function withoutKey(obj: Record<string, unknown>, key: string): Record<string, unknown> {
  const { [key]: _removed, ...rest } = obj;
  return rest;
}

/** The paths of every issue when parsing fails; fails the test when parsing succeeds. */
function issuePaths(value: unknown): string[] {
  const result = parseEvent(value);
  expect(result.success).toBe(false);
  return result.success ? [] : result.issues.map((i) => i.path.join('.'));
}

describe('the catalogue (design R7)', () => {
  it('has exactly the six events', () => {
    expect(EVENT_NAMES).toHaveLength(6);
    expect([...EVENT_NAMES]).toEqual(SIX_EVENTS);
    expect(Object.keys(eventSchemas).sort()).toEqual([...SIX_EVENTS].sort());
    expect(Object.keys(dataSchemas).sort()).toEqual([...SIX_EVENTS].sort());
  });

  it('isEventName accepts only catalogued names', () => {
    for (const name of SIX_EVENTS) expect(isEventName(name)).toBe(true);
    for (const name of ['Click', 'click.created', 'link', 'constructor', '__proto__', '', ' click'])
      expect(isEventName(name)).toBe(false);
    expect(isEventName(undefined)).toBe(false);
    expect(isEventName(['click'])).toBe(false);
  });
});

describe.each(SIX_EVENTS as EventName[])('%s', (name) => {
  const data = SAMPLE_DATA[name];

  it('a valid sample parses as a known event, unchanged', () => {
    const input = envelope(name);
    const result = parseEvent(input);
    expect(result).toEqual({ success: true, known: true, event: input });
    if (result.success) expect(isKnownEvent(result.event)).toBe(true);
    expect(eventSchemas[name].safeParse(input).success).toBe(true);
    expect(dataSchemas[name].safeParse(data).success).toBe(true);
  });

  it.each(Object.keys(data))('missing data.%s fails at that path', (key) => {
    expect(issuePaths(envelope(name, withoutKey(data, key)))).toEqual([`data.${key}`]);
  });

  it.each(['event', 'timestamp', 'data'])('missing envelope field %s fails', (key) => {
    const paths = issuePaths(withoutKey(envelope(name), key));
    // Without `event` the value is checked as a generic envelope; the path still names the field.
    expect(paths).toContain(key);
  });

  it('rejects a non-integer link_id', () => {
    expect(issuePaths(envelope(name, { ...data, link_id: 1.5 }))).toEqual(['data.link_id']);
    expect(issuePaths(envelope(name, { ...data, link_id: '42' }))).toEqual(['data.link_id']);
  });

  it('keeps unknown fields at envelope and data level', () => {
    const input = {
      ...envelope(name, { ...data, added_later: { nested: [1, 2] } }),
      version: 2,
      id: 'evt_1',
    };
    const result = parseEvent(input);
    expect(result.success).toBe(true);
    if (!result.success) return;
    expect(result.event).toEqual(input);
    expect(result.event.version).toBe(2);
    expect((result.event.data as Record<string, unknown>).added_later).toEqual({ nested: [1, 2] });
  });

  it('rejects a bad timestamp', () => {
    expect(issuePaths({ ...envelope(name), timestamp: '2026-11-22T10:04:05.000Z' })).toEqual(['timestamp']);
    expect(issuePaths({ ...envelope(name), timestamp: '2026-02-30T10:04:05Z' })).toEqual(['timestamp']);
    expect(issuePaths({ ...envelope(name), timestamp: 1_700_000_000 })).toEqual(['timestamp']);
  });

  it('rejects data that is not an object', () => {
    expect(issuePaths({ ...envelope(name), data: null })).toEqual(['data']);
    expect(issuePaths({ ...envelope(name), data: [] })).toEqual(['data']);
    expect(issuePaths({ ...envelope(name), data: JSON.stringify(data) })).toEqual(['data']);
  });
});

describe('field types', () => {
  it('click: is_unique must be a boolean, not "true"', () => {
    expect(issuePaths(envelope('click', { ...SAMPLE_DATA.click, is_unique: 'true' }))).toEqual([
      'data.is_unique',
    ]);
  });

  it('conversion: revenue must be a number, not "49.9"', () => {
    expect(issuePaths(envelope('conversion', { ...SAMPLE_DATA.conversion, revenue: '49.9' }))).toEqual([
      'data.revenue',
    ]);
  });

  it('conversion: revenue may be a decimal, zero or an integer', () => {
    for (const revenue of [0, 12, 0.01, 1234.5678]) {
      expect(parseEvent(envelope('conversion', { ...SAMPLE_DATA.conversion, revenue })).success).toBe(true);
    }
  });

  it('click: fraud_flags accepts any elements, but must be an array', () => {
    const flags = ['vpn', 3, null, { kind: 'bot', score: 0.9 }, ['nested'], true];
    const result = parseEvent(envelope('click', { ...SAMPLE_DATA.click, fraud_flags: flags }));
    expect(result.success).toBe(true);
    if (result.success) expect((result.event.data as { fraud_flags: unknown }).fraud_flags).toEqual(flags);
    expect(issuePaths(envelope('click', { ...SAMPLE_DATA.click, fraud_flags: 'vpn' }))).toEqual([
      'data.fraud_flags',
    ]);
  });

  it('link.created: rules_count is an integer, is_active a boolean', () => {
    const data = SAMPLE_DATA['link.created'];
    expect(issuePaths(envelope('link.created', { ...data, rules_count: 2.5 }))).toEqual(['data.rules_count']);
    expect(issuePaths(envelope('link.created', { ...data, is_active: 1 }))).toEqual(['data.is_active']);
  });

  it('link.updated requires changed: string[]', () => {
    const data = SAMPLE_DATA['link.updated'];
    expect(issuePaths(envelope('link.updated', withoutKey(data, 'changed')))).toEqual(['data.changed']);
    expect(issuePaths(envelope('link.updated', { ...data, changed: 'name' }))).toEqual(['data.changed']);
    expect(issuePaths(envelope('link.updated', { ...data, changed: ['name', 3] }))).toEqual([
      'data.changed.1',
    ]);
    expect(parseEvent(envelope('link.updated', { ...data, changed: [] })).success).toBe(true);
    // The state after the change: every field of link.created is required too.
    expect(issuePaths(envelope('link.updated', withoutKey(data, 'name')))).toEqual(['data.name']);
  });

  it('link.deleted is {link_id, slug}', () => {
    expect(parseEvent(envelope('link.deleted', { link_id: 1, slug: 's' })).success).toBe(true);
    expect(issuePaths(envelope('link.deleted', {})).sort()).toEqual(['data.link_id', 'data.slug']);
    expect(issuePaths(envelope('link.deleted', { link_id: 1, link_slug: 's' }))).toEqual(['data.slug']);
    expect(Object.keys(eventJsonSchema('link.deleted').properties as object)).toEqual([
      'event',
      'timestamp',
      'data',
    ]);
    const dataSchema = (eventJsonSchema('link.deleted').properties as Record<string, Record<string, unknown>>)
      .data!;
    expect(Object.keys(dataSchema.properties as object)).toEqual(['link_id', 'slug']);
    expect(dataSchema.required).toEqual(['link_id', 'slug']);
  });

  it('alert.triggered: metric and condition accept unknown strings, but not non-strings', () => {
    const data = SAMPLE_DATA['alert.triggered'];
    const result = parseEvent(
      envelope('alert.triggered', { ...data, metric: 'bounce_rate', condition: 'crosses_below' }),
    );
    expect(result.success).toBe(true);
    if (result.success) {
      expect(result.event.data).toMatchObject({ metric: 'bounce_rate', condition: 'crosses_below' });
    }
    expect(issuePaths(envelope('alert.triggered', { ...data, metric: 1 }))).toEqual(['data.metric']);
    expect(issuePaths(envelope('alert.triggered', { ...data, condition: null }))).toEqual(['data.condition']);
  });

  it('alert.triggered: threshold and current_value may be decimals; alert_id must be an integer', () => {
    const data = SAMPLE_DATA['alert.triggered'];
    expect(
      parseEvent(envelope('alert.triggered', { ...data, threshold: 0.05, current_value: 0.07 })).success,
    ).toBe(true);
    expect(issuePaths(envelope('alert.triggered', { ...data, alert_id: 5.5 }))).toEqual(['data.alert_id']);
    expect(issuePaths(envelope('alert.triggered', { ...data, threshold: '1000' }))).toEqual([
      'data.threshold',
    ]);
  });

  it('an event name with the wrong data shape fails against that event’s schema', () => {
    const paths = issuePaths(envelope('link.deleted', SAMPLE_DATA.click));
    expect(paths).toEqual(['data.slug']);
    expect(issuePaths(envelope('click', SAMPLE_DATA['link.deleted']))).toContain('data.click_id');
  });
});

describe('parseEvent on the unexpected', () => {
  it('an unknown event name with a valid generic envelope succeeds as unknown', () => {
    const input = {
      event: 'link.archived',
      timestamp: TIMESTAMP,
      data: { link_id: 1, whatever: [1] },
      extra: true,
    };
    const result = parseEvent(input);
    expect(result).toEqual({ success: true, known: false, event: input });
    if (result.success) expect(isKnownEvent(result.event)).toBe(false);
  });

  it('an unknown event name still needs the envelope', () => {
    expect(issuePaths({ event: 'link.archived', timestamp: 'yesterday', data: {} })).toEqual(['timestamp']);
    expect(issuePaths({ event: 'link.archived', timestamp: TIMESTAMP, data: 'x' })).toEqual(['data']);
    expect(issuePaths({ event: '', timestamp: TIMESTAMP, data: {} })).toEqual(['event']);
    expect(issuePaths({ event: 7, timestamp: TIMESTAMP, data: {} })).toEqual(['event']);
  });

  it.each([
    ['null', null],
    ['undefined', undefined],
    ['array', [envelope('click')]],
    ['string', JSON.stringify(envelope('click'))],
    ['number', 42],
    ['boolean', true],
    ['empty object', {}],
  ])('fails without throwing on %s', (_, value) => {
    let result: ReturnType<typeof parseEvent> | undefined;
    expect(() => {
      result = parseEvent(value);
    }).not.toThrow();
    expect(result!.success).toBe(false);
    if (result && !result.success) expect(result.issues.length).toBeGreaterThan(0);
  });

  it('a name that collides with Object.prototype is not treated as known', () => {
    for (const event of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      expect(() => parseEvent({ event, timestamp: TIMESTAMP, data: {} })).not.toThrow();
      const result = parseEvent({ event, timestamp: TIMESTAMP, data: {} });
      expect(result.success && result.known).toBe(false);
    }
  });

  it('a "__proto__" key in the JSON neither reaches the output nor changes its prototype', () => {
    const text = `{"event":"link.deleted","timestamp":"${TIMESTAMP}","data":{"link_id":1,"slug":"s","__proto__":{"polluted":1}},"__proto__":{"polluted":2}}`;
    const result = parseEvent(JSON.parse(text));
    expect(result.success).toBe(true);
    if (!result.success) return;
    expect(Object.getPrototypeOf(result.event)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(result.event.data)).toBe(Object.prototype);
    expect((result.event as Record<string, unknown>).polluted).toBeUndefined();
    expect((result.event.data as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('the generic envelope schema is open too', () => {
    const input = { event: 'x', timestamp: TIMESTAMP, data: { a: 1 }, b: 2 };
    expect(envelopeSchema.parse(input)).toEqual(input);
  });
});

describe('JSON Schemas', () => {
  const schemas = eventJsonSchemas();
  const PATTERN = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$';

  it('has one schema per event', () => {
    expect(Object.keys(schemas)).toEqual(SIX_EVENTS);
  });

  it.each(SIX_EVENTS as EventName[])(
    '%s: draft 2020-12, required envelope, const event, timestamp pattern',
    (name) => {
      const schema = schemas[name] as {
        $schema: string;
        $id: string;
        type: string;
        required: string[];
        properties: Record<string, Record<string, unknown>>;
      };
      expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(schema.$id).toBe(`https://linkhooks.dev/schemas/${name}.json`);
      expect(schema.type).toBe('object');
      expect([...schema.required].sort()).toEqual(['data', 'event', 'timestamp']);
      expect(schema.properties.event!.const).toBe(name);
      expect(schema.properties.timestamp!.pattern).toBe(PATTERN);
      expect(schema).toEqual(eventJsonSchema(name));
      // Every field of the sample is declared and required in the data schema.
      const data = schema.properties.data!;
      expect([...(data.required as string[])].sort()).toEqual(Object.keys(SAMPLE_DATA[name]).sort());
    },
  );

  it('the pattern in the JSON Schema matches what isTimestamp-based parsing accepts', () => {
    const re = new RegExp(PATTERN);
    expect(re.test(TIMESTAMP)).toBe(true);
    expect(re.test('2026-11-22T10:04:05.000Z')).toBe(false);
  });

  it('the generic envelope schema', () => {
    const schema = envelopeJsonSchema() as {
      required: string[];
      properties: Record<string, Record<string, unknown>>;
    };
    expect([...schema.required].sort()).toEqual(['data', 'event', 'timestamp']);
    expect(schema.properties.timestamp!.pattern).toBe(PATTERN);
    expect(schema.properties.event!.const).toBeUndefined();
  });

  it('integers are typed as integers, decimals as numbers', () => {
    const conversion = (
      schemas.conversion as { properties: { data: { properties: Record<string, { type: string }> } } }
    ).properties.data.properties;
    expect(conversion.link_id!.type).toBe('integer');
    expect(conversion.revenue!.type).toBe('number');
  });
});
