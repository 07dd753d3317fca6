/**
 * Where retention's walk of old events starts (design D16): after where the last pass ended, and
 * from the oldest once a day. Each pass walked from the oldest event, past every one still holding
 * a delivery (a paused endpoint's held ones are never pruned), so a customer's backlog held for
 * months was read again every hour, 100 events a step, on SQLite's event loop. Events behind the
 * cursor that lose their last delivery later (retention, an endpoint's deletion) go at the next
 * walk from the oldest, a day at most after the cutoff passed them.
 */

/** How often a walk starts again from the oldest event, in the cutoff's time. */
export const WALK_FROM_OLDEST_EVERY_MS = 24 * 60 * 60_000;

/** The last event a walk read, by creation time and id; a pass moves it on as it goes. */
export interface EventCursor {
  at: number;
  id: string;
}

export type EventWalks = ReturnType<typeof eventWalks>;

export function eventWalks() {
  const cursor: EventCursor = { at: -1, id: '' };
  let fromOldestAt = Number.NEGATIVE_INFINITY;
  return {
    /** The cursor a pass at `cutoff` starts after, moved back to the oldest once a day. */
    start(cutoff: number): EventCursor {
      if (cutoff - fromOldestAt >= WALK_FROM_OLDEST_EVERY_MS || cutoff < fromOldestAt) {
        cursor.at = -1;
        cursor.id = '';
        fromOldestAt = cutoff;
      }
      return cursor;
    },
  };
}
