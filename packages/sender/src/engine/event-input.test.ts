import { formatTimestamp, sampleEventData } from '@linkhooks/protocol';
import { describe, expect, it } from 'vitest';
import { isSenderError } from '../errors.js';
import { buildEvent, MAX_EVENT_BODY_BYTES, timestampOf } from './event-input.js';

const T0 = Date.UTC(2026, 10, 26, 9, 0, 0);

describe('timestampOf', () => {
  it("is now's envelope timestamp at times around a second's turn, forwards and back, and at fractions", () => {
    const times = [
      T0 - 1,
      T0,
      T0 + 1,
      T0 + 999,
      T0 + 1000,
      T0 + 1, // back into the second before: the kept string must be replaced, not reused
      T0 - 1_000,
      T0 + 86_400_000,
      -1,
      -0.5,
      0,
      999.9999999999999,
      1000,
    ];
    for (const now of times) expect(timestampOf(now)).toBe(formatTimestamp(now));
  });

  it('stamps a built event with it when the input gives none', () => {
    const event = buildEvent('acct_1', { event: 'click', data: sampleEventData('click') }, T0 + 1_500);
    expect(JSON.parse(Buffer.from(event.body).toString()).timestamp).toBe('2026-11-26T09:00:01Z');
  });
});

describe('buildEvent: the body limit', () => {
  /** A click whose body, as built, is `bytes` long: its referer padded (an accent is two bytes). */
  const clickOf = (bytes: number) => {
    const data = { ...sampleEventData('click'), referer: '' };
    const base = buildEvent('acct_1', { event: 'click', data }, T0).body.byteLength;
    const pad = bytes - base;
    return {
      event: 'click' as const,
      data: { ...data, referer: `${'é'.repeat(pad >> 1)}${'a'.repeat(pad & 1)}` },
    };
  };

  it('takes a body of exactly the limit, and refuses one a byte over with payload_too_large', () => {
    expect(buildEvent('acct_1', clickOf(MAX_EVENT_BODY_BYTES), T0).body.byteLength).toBe(
      MAX_EVENT_BODY_BYTES,
    );
    let refused: unknown;
    try {
      buildEvent('acct_1', clickOf(MAX_EVENT_BODY_BYTES + 1), T0);
    } catch (error) {
      refused = error;
    }
    expect(isSenderError(refused) && [refused.code, refused.status, refused.message]).toEqual([
      'payload_too_large',
      413,
      'the payload delivered for this event ({event, timestamp, data}) would be 257 KiB; it may be at most 256 KiB',
    ]);
  });
});
