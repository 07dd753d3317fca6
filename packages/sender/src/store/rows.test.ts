import { describe, expect, it } from 'vitest';
import type { AttemptRecord } from './records.js';
import { attemptValues, bodiesOf, leaseOfRow, type Row, toClaimed, toEvent } from './rows.js';

/** A claim's row as a driver gives it: the body a small Buffer, a slice of Node's shared pool. */
function row(id: string, eventId: string, body: string, lease: Partial<Row> = {}): Row {
  return {
    id,
    event_id: eventId,
    endpoint_id: `ep_${id}`,
    account_id: 'acct_1',
    event_name: 'click',
    status: 'pending',
    attempts: 0,
    next_attempt_at: 1_000,
    last_failure_kind: null,
    last_status_code: null,
    test: 0,
    created_at: 1_000,
    updated_at: 1_000,
    body: Buffer.from(body),
    url: `https://receiver.example/${id}`,
    origin: 'https://receiver.example',
    secret: 'whsec_test',
    previous_secret: null,
    previous_secret_expires_at: null,
    standard_webhooks: 0,
    ...lease,
  };
}

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString();

describe('toClaimed', () => {
  it('gives the deliveries of one event one copy of its body, and each other event its own', () => {
    const rows = [
      row('d1', 'evt_a', '{"a":1}'),
      row('d2', 'evt_b', '{"b":2}'),
      row('d3', 'evt_a', '{"a":1}'),
    ];
    const [first, other, third] = toClaimed(rows, () => ['token', 5_000], bodiesOf(rows));
    expect(third!.body).toBe(first!.body);
    expect(other!.body).not.toBe(first!.body);
    expect([first, other, third].map((c) => text(c!.body))).toEqual(['{"a":1}', '{"b":2}', '{"a":1}']);
  });

  it('gives each delivery its event’s body from whichever row carries it, or from rows of their own', () => {
    // PostgreSQL's claim carries each event's body on one of its rows, not always the first.
    const rows = [
      row('d1', 'evt_a', '', { body: null }),
      row('d2', 'evt_b', '{"b":2}'),
      row('d3', 'evt_a', '{"a":1}'),
    ];
    expect(toClaimed(rows, ['t', 1], bodiesOf(rows)).map((c) => text(c.body))).toEqual([
      '{"a":1}',
      '{"b":2}',
      '{"a":1}',
    ]);
    // SQLite's reads the bodies apart, each row an event's id and body.
    const bodies = bodiesOf([{ event_id: 'evt_a', body: Buffer.from('{"a":3}') }]);
    const withoutBodies = [row('d4', 'evt_a', '', { body: null })];
    expect(text(toClaimed(withoutBodies, ['t', 1], bodies)[0]!.body)).toBe('{"a":3}');
    // A body missing is the claim's fault, not a delivery sent empty.
    expect(() => toClaimed([row('d5', 'evt_c', '', { body: null })], ['t', 1], bodies)).toThrow(
      expect.objectContaining({ code: 'internal' }),
    );
  });

  it("copies the body out of the driver's buffer, so it can be posted to the delivery thread alone", () => {
    const source = row('d1', 'evt_a', '{"a":1}');
    const pooled = source.body as Buffer;
    expect(pooled.buffer.byteLength).toBeGreaterThan(pooled.byteLength); // the pool's slab behind it
    const [claimed] = toClaimed([source], () => ['token', 5_000], bodiesOf([source]));
    expect(claimed!.body.buffer.byteLength).toBe(claimed!.body.byteLength);
    pooled.fill(0);
    expect(text(claimed!.body)).toBe('{"a":1}');
  });

  it('keeps a body that fills its own buffer (a large one) where it is, with no copy', () => {
    const source = row('d1', 'evt_a', '', { body: Buffer.alloc(64 * 1024, 0x61) });
    const [claimed] = toClaimed([source], () => ['token', 5_000], bodiesOf([source]));
    expect(claimed!.body.buffer).toBe((source.body as Buffer).buffer);
    expect(claimed!.body.byteLength).toBe(64 * 1024);
    // A view that starts past its buffer's beginning is copied, however long.
    const bytes = Buffer.alloc(64 * 1024 + 1, 0x62);
    const offset = row('d2', 'evt_b', '', { body: bytes.subarray(1) });
    const [copied] = toClaimed([offset], () => ['token', 5_000], bodiesOf([offset]));
    expect(copied!.body.buffer).not.toBe(bytes.buffer);
    expect(copied!.body.byteLength).toBe(copied!.body.buffer.byteLength);
  });

  it('takes each row’s lease from the function given, in the rows’ order', () => {
    const rows = [
      row('d1', 'evt_a', '{}', { lease_token: 't1', lease_expires_at: '7000' }),
      row('d2', 'evt_a', '{}', { lease_token: 't2', lease_expires_at: '8000' }),
    ];
    const claimed = toClaimed(rows, leaseOfRow, bodiesOf(rows));
    expect(claimed.map((c) => [c.delivery.id, c.leaseToken, c.leaseExpiresAt])).toEqual([
      ['d1', 't1', 7_000],
      ['d2', 't2', 8_000],
    ]);
  });

  it('gives every row the one lease a claim took for all of them', () => {
    const rows = [
      row('d1', 'evt_a', '{}', { lease_token: 'not-read', lease_expires_at: '1' }),
      row('d2', 'evt_b', '{}'),
    ];
    const claimed = toClaimed(rows, ['t9', 9_000], bodiesOf(rows));
    expect(claimed.map((c) => [c.delivery.id, c.leaseToken, c.leaseExpiresAt])).toEqual([
      ['d1', 't9', 9_000],
      ['d2', 't9', 9_000],
    ]);
  });
});

describe('an event body stored as text', () => {
  // SQLite keeps what hand-written SQL gives it: a string literal is text, not bytes.
  const text8 = '{"city":"Zürich"}';
  it('is read as its UTF-8 bytes, by a claim and by the log alike', () => {
    const bodies = bodiesOf([{ event_id: 'evt_t', body: text8 }]);
    expect(Buffer.from(bodies.get('evt_t')!)).toEqual(Buffer.from(text8, 'utf8'));
    const event = toEvent({ id: 'evt_t', account_id: 'a', name: 'click', body: text8, created_at: 1 });
    expect(Buffer.from(event.body)).toEqual(Buffer.from(text8, 'utf8'));
  });
});

describe('attemptValues', () => {
  const attempt: AttemptRecord = {
    deliveryId: 'dlv_own',
    number: 2,
    startedAt: 5_000,
    durationMs: 12,
    statusCode: 503,
    failureKind: 'http_status',
    errorMessage: 'Service Unavailable',
    responseSnippet: 'busy',
    nextAttemptAt: null,
    requestHeaders: { 'x-service-attempt': '2' },
  };

  it('gives the columns in table order, the headers as JSON', () => {
    expect(attemptValues(attempt, attempt.nextAttemptAt)).toEqual([
      'dlv_own',
      2,
      5_000,
      12,
      503,
      'http_status',
      'Service Unavailable',
      'busy',
      null,
      '{"x-service-attempt":"2"}',
    ]);
  });

  it('puts the next attempt’s time given in its column, and the delivery given in place of the attempt’s own', () => {
    const values = attemptValues(attempt, 65_000, 'dlv_leased');
    expect(values[0]).toBe('dlv_leased');
    expect(values[8]).toBe(65_000);
    expect(values.slice(1, 8)).toEqual(attemptValues(attempt, null).slice(1, 8));
  });
});
