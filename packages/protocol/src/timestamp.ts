/**
 * The envelope's timestamp form: `YYYY-MM-DDThh:mm:ssZ` (design R5) — whole seconds, UTC, no
 * fraction. `Date#toISOString()` writes milliseconds, so it is never used as is.
 */
/**
 * Writes a date in the envelope's timestamp form, truncated to the second.
 *
 * @example
 * formatTimestamp(new Date('2026-11-22T10:04:05.678Z')); // '2026-11-22T10:04:05Z'
 */
export function formatTimestamp(date: Date | number = Date.now()): string {
  const d = typeof date === 'number' ? new Date(date) : date;
  const ms = d.getTime();
  if (!Number.isFinite(ms)) throw new RangeError('formatTimestamp: invalid date');
  const year = d.getUTCFullYear();
  if (year < 0 || year > 9999) throw new RangeError('formatTimestamp: year must be between 0000 and 9999');
  return d.toISOString().slice(0, 19) + 'Z';
}

function digits(s: string, from: number, count: number): number {
  let n = 0;
  for (let i = from; i < from + count; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * Whether `value` is a real calendar instant written in the envelope's timestamp form. Checked
 * character by character: it runs on every verified delivery, and regex + Date round trips cost
 * more than the HMAC.
 *
 * @example
 * isTimestamp('2026-11-22T10:04:05Z'); // true
 * isTimestamp('2026-11-22T10:04:05.000Z'); // false: no fraction
 * isTimestamp('2026-02-30T00:00:00Z'); // false: no such day
 */
export function isTimestamp(value: unknown): value is string {
  if (typeof value !== 'string' || value.length !== 20) return false;
  if (value[4] !== '-' || value[7] !== '-' || value[10] !== 'T' || value[13] !== ':' || value[16] !== ':')
    return false;
  if (value[19] !== 'Z') return false;
  const year = digits(value, 0, 4);
  const month = digits(value, 5, 2);
  const day = digits(value, 8, 2);
  const hour = digits(value, 11, 2);
  const minute = digits(value, 14, 2);
  const second = digits(value, 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return false;
  return hour >= 0 && hour <= 23 && minute >= 0 && minute <= 59 && second >= 0 && second <= 59;
}

/** Parses an envelope timestamp to epoch milliseconds, or `null` when it is not in the form. */
export function parseTimestamp(value: string): number | null {
  return isTimestamp(value) ? Date.parse(value) : null;
}
