import { formatTimestamp, sampleEventData } from '@linkhooks/protocol';
import { describe, expect, it } from 'vitest';
import { buildEvent, timestampOf } from './event-input.js';

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
