import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatTimestamp, isTimestamp, parseTimestamp } from './timestamp.js';

describe('formatTimestamp', () => {
  it('writes YYYY-MM-DDThh:mm:ssZ, truncating (not rounding) milliseconds', () => {
    expect(formatTimestamp(new Date('2026-11-22T10:04:05.678Z'))).toBe('2026-11-22T10:04:05Z');
    expect(formatTimestamp(new Date('2026-11-22T10:04:05.999Z'))).toBe('2026-11-22T10:04:05Z');
    expect(formatTimestamp(new Date('2026-11-22T23:59:59.999Z'))).toBe('2026-11-22T23:59:59Z');
    expect(formatTimestamp(new Date('2026-01-02T03:04:05.000Z'))).toBe('2026-01-02T03:04:05Z');
  });

  it('accepts epoch milliseconds', () => {
    expect(formatTimestamp(0)).toBe('1970-01-01T00:00:00Z');
    expect(formatTimestamp(1_700_000_000_123)).toBe('2023-11-14T22:13:20Z');
  });

  it('writes UTC whatever the date was built from', () => {
    expect(formatTimestamp(new Date('2026-06-01T02:30:00+05:00'))).toBe('2026-05-31T21:30:00Z');
  });

  it('defaults to now', () => {
    const before = Math.floor(Date.now() / 1000) * 1000;
    const now = formatTimestamp();
    const after = Date.now();
    expect(isTimestamp(now)).toBe(true);
    const parsed = parseTimestamp(now)!;
    expect(parsed).toBeGreaterThanOrEqual(before);
    expect(parsed).toBeLessThanOrEqual(after);
  });

  it('has exactly the wire form', () => {
    const s = formatTimestamp(new Date(Date.UTC(2024, 1, 29, 7, 8, 9, 10)));
    expect(s).toBe('2024-02-29T07:08:09Z');
    expect(s).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(s).toHaveLength(20);
  });

  it('rejects invalid dates and years outside 0000-9999', () => {
    expect(() => formatTimestamp(new Date('not a date'))).toThrow(RangeError);
    expect(() => formatTimestamp(Number.NaN)).toThrow(RangeError);
    expect(() => formatTimestamp(Number.POSITIVE_INFINITY)).toThrow(RangeError);
    expect(() => formatTimestamp(Date.UTC(10000, 0, 1))).toThrow(RangeError);
    expect(() => formatTimestamp(new Date('-000001-01-01T00:00:00Z'))).toThrow(RangeError);
  });

  it('writes the edges of the range', () => {
    expect(formatTimestamp(new Date('9999-12-31T23:59:59.999Z'))).toBe('9999-12-31T23:59:59Z');
    expect(formatTimestamp(new Date('0000-01-01T00:00:00Z'))).toBe('0000-01-01T00:00:00Z');
  });
});

describe('isTimestamp', () => {
  it.each([
    '2026-11-22T10:04:05Z',
    '1970-01-01T00:00:00Z',
    '9999-12-31T23:59:59Z',
    '2024-02-29T12:00:00Z',
    '2000-02-29T12:00:00Z',
    '2026-04-30T00:00:00Z',
    '2026-12-31T23:59:59Z',
  ])('accepts %s', (value) => {
    expect(isTimestamp(value)).toBe(true);
  });

  it.each([
    ['fraction', '2026-11-22T10:04:05.000Z'],
    ['fraction without Z', '2026-11-22T10:04:05.1Z'],
    ['+00:00 offset', '2026-11-22T10:04:05+00:00'],
    ['other offset', '2026-11-22T10:04:05+0100'],
    ['no zone', '2026-11-22T10:04:05'],
    ['lowercase t', '2026-11-22t10:04:05Z'],
    ['lowercase z', '2026-11-22T10:04:05z'],
    ['space instead of T', '2026-11-22 10:04:05Z'],
    ['Feb 30', '2026-02-30T00:00:00Z'],
    ['Feb 29 in a non-leap year', '2026-02-29T00:00:00Z'],
    ['Feb 29 in 1900 (century, not leap)', '1900-02-29T00:00:00Z'],
    ['Apr 31', '2026-04-31T00:00:00Z'],
    ['day 00', '2026-11-00T00:00:00Z'],
    ['day 32', '2026-01-32T00:00:00Z'],
    ['month 00', '2026-00-10T00:00:00Z'],
    ['month 13', '2026-13-10T00:00:00Z'],
    ['hour 24', '2026-11-22T24:00:00Z'],
    ['minute 60', '2026-11-22T10:60:00Z'],
    ['second 60 (leap second)', '2026-12-31T23:59:60Z'],
    ['short year', '226-11-22T10:04:05Z'],
    ['five-digit year', '12026-11-22T10:04:05Z'],
    ['expanded year', '+002026-11-22T10:04:05Z'],
    ['one-digit month', '2026-1-22T10:04:05Z'],
    ['missing seconds', '2026-11-22T10:04Z'],
    ['date only', '2026-11-22'],
    ['trailing space', '2026-11-22T10:04:05Z '],
    ['leading space', ' 2026-11-22T10:04:05Z'],
    ['sign in a field', '2026-11-22T10:+4:05Z'],
    ['letters in a field', '2026-11-22T1a:04:05Z'],
    ['wrong separators', '2026/11/22T10:04:05Z'],
    ['full-width digits', '２０２６-11-22T10:04:05Z'],
    ['empty', ''],
  ])('rejects %s', (_, value) => {
    expect(isTimestamp(value)).toBe(false);
    expect(parseTimestamp(value)).toBeNull();
  });

  it('accepts Feb 29 in leap years only', () => {
    expect(isTimestamp('2024-02-29T00:00:00Z')).toBe(true);
    expect(isTimestamp('2000-02-29T00:00:00Z')).toBe(true);
    expect(isTimestamp('2023-02-29T00:00:00Z')).toBe(false);
    expect(isTimestamp('2100-02-29T00:00:00Z')).toBe(false);
  });

  it.each([
    ['number', 1_700_000_000],
    ['Date', new Date('2026-11-22T10:04:05Z')],
    ['null', null],
    ['undefined', undefined],
    ['boxed string', new String('2026-11-22T10:04:05Z')],
    ['array', ['2026-11-22T10:04:05Z']],
    ['object', { toString: () => '2026-11-22T10:04:05Z' }],
  ])('rejects a non-string: %s', (_, value) => {
    expect(isTimestamp(value)).toBe(false);
  });
});

describe('parseTimestamp', () => {
  it('returns epoch milliseconds', () => {
    expect(parseTimestamp('1970-01-01T00:00:00Z')).toBe(0);
    expect(parseTimestamp('2026-11-22T10:04:05Z')).toBe(Date.UTC(2026, 10, 22, 10, 4, 5));
  });
});

describe('properties', () => {
  const dateArb = fc.date({
    min: new Date('1970-01-01T00:00:00.000Z'),
    max: new Date('9999-12-31T23:59:59.999Z'),
    noInvalidDate: true,
  });

  it('format → isTimestamp → parse round-trips to the second', () => {
    fc.assert(
      fc.property(dateArb, (date) => {
        const s = formatTimestamp(date);
        expect(isTimestamp(s)).toBe(true);
        expect(s).toHaveLength(20);
        expect(parseTimestamp(s)).toBe(Math.floor(date.getTime() / 1000) * 1000);
        expect(s).toBe(date.toISOString().replace(/\.\d{3}Z$/, 'Z'));
      }),
      { numRuns: 1000 },
    );
  });

  it('isTimestamp agrees with a regex + Date round trip on near-miss strings', () => {
    const field = (max: number, width = 2) => fc.nat(max).map((n) => String(n).padStart(width, '0'));
    // Each field ranges a little past its limits, so valid and near-miss values both come up often.
    const candidate = fc
      .tuple(field(9999, 4), field(13), field(32), field(25), field(61), field(61))
      .map(([y, mo, d, h, mi, s]) => `${y}-${mo}-${d}T${h}:${mi}:${s}Z`);
    let accepted = 0;
    let rejected = 0;
    fc.assert(
      fc.property(candidate, (value) => {
        const ms = Date.parse(value);
        const oracle =
          Number.isFinite(ms) &&
          Number(value.slice(17, 19)) < 60 &&
          new Date(ms).toISOString().slice(0, 19) === value.slice(0, 19);
        expect(isTimestamp(value)).toBe(oracle);
        if (oracle) accepted++;
        else rejected++;
      }),
      { numRuns: 2000 },
    );
    // Both sides of the property were exercised.
    expect(accepted).toBeGreaterThan(100);
    expect(rejected).toBeGreaterThan(100);
  });
});
