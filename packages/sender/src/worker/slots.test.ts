import { describe, expect, it } from 'vitest';
import { HELD_SLOT_MS } from '../domain/breaker.js';
import { freeSlots, WAITING_PER_SLOT, waitingAt } from './slots.js';

describe('the worker’s slots', () => {
  it('frees the slot of a request once it has waited HELD_SLOT_MS, not before', () => {
    const now = 10_000;
    expect(waitingAt([now - 29_000, now - HELD_SLOT_MS, now - HELD_SLOT_MS + 1, now], now)).toBe(2);
    expect(waitingAt([], now)).toBe(0);
  });

  it('counts requests sending and being recorded against the slots, the waiting ones apart', () => {
    expect(freeSlots({ concurrency: 64, sending: 64, unrecorded: 64, waiting: 0 })).toBe(0);
    expect(freeSlots({ concurrency: 64, sending: 64, unrecorded: 64, waiting: 40 })).toBe(40);
    // Records pending count too: at most as many again as the slots.
    expect(freeSlots({ concurrency: 64, sending: 10, unrecorded: 120, waiting: 0 })).toBe(8);
    expect(freeSlots({ concurrency: 64, sending: 10, unrecorded: 120, waiting: 10 })).toBe(18);
  });

  it('holds slots again past WAITING_PER_SLOT waiting requests a slot', () => {
    const bound = WAITING_PER_SLOT * 64;
    expect(freeSlots({ concurrency: 64, sending: bound, unrecorded: bound, waiting: bound })).toBe(64);
    expect(
      freeSlots({ concurrency: 64, sending: bound + 64, unrecorded: bound + 64, waiting: bound + 64 }),
    ).toBe(0);
  });
});
