import { describe, expect, it } from 'vitest';
import { eventWalks, WALK_FROM_OLDEST_EVERY_MS } from './event-walk.js';

describe('eventWalks', () => {
  it('goes on from where the last pass ended, and from the oldest once a day', () => {
    const walks = eventWalks();
    const T0 = Date.UTC(2026, 11, 1);
    const first = walks.start(T0);
    expect(first).toEqual({ at: -1, id: '' });
    first.at = T0 - 5;
    first.id = 'evt_5';
    // An hour on: after the last event read.
    expect(walks.start(T0 + 3_600_000)).toEqual({ at: T0 - 5, id: 'evt_5' });
    expect(walks.start(T0 + WALK_FROM_OLDEST_EVERY_MS - 1)).toEqual({ at: T0 - 5, id: 'evt_5' });
    // A day after the last walk from the oldest: from the oldest again.
    expect(walks.start(T0 + WALK_FROM_OLDEST_EVERY_MS)).toEqual({ at: -1, id: '' });
  });

  it('starts from the oldest when the cutoff goes back (a clock set back)', () => {
    const walks = eventWalks();
    const cursor = walks.start(10_000);
    cursor.at = 9_000;
    cursor.id = 'evt_9';
    expect(walks.start(5_000)).toEqual({ at: -1, id: '' });
  });
});
