/**
 * Retention (design D16): final deliveries last updated before the cutoff go, and events older
 * than the cutoff left without any, in steps (prune-steps.ts), each walking an index; the events'
 * walk goes on from where the last pass ended (event-walk.ts).
 */
import { type EventCursor, eventWalks } from '../event-walk.js';
import { inSteps } from '../prune-steps.js';
import { isFinalSql } from '../sql-rules.js';
import type { SqliteDb } from './database.js';
import { SQLITE_STEP_ROWS } from './step-rows.js';

const PRUNE_DELIVERIES = `
DELETE FROM deliveries WHERE id IN (
  SELECT id FROM deliveries INDEXED BY deliveries_final
  WHERE ${isFinalSql('status')} AND updated_at < @cutoff LIMIT ${SQLITE_STEP_ROWS})`;
/** The next step of old events, from where the last one ended (`@afterAt`, `@afterId`). */
const OLD_EVENTS = `
SELECT id, created_at FROM events INDEXED BY events_by_created
WHERE created_at < @cutoff AND (created_at > @afterAt OR (created_at = @afterAt AND id > @afterId))
ORDER BY created_at, id LIMIT ${SQLITE_STEP_ROWS}`;
const DELETE_EVENTS_WITHOUT_DELIVERIES = `
DELETE FROM events WHERE id IN (SELECT value FROM json_each(@ids))
  AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = events.id)`;

export function pruneBefore(db: SqliteDb) {
  const deliveries = db.immediate((cutoff: number) => db.st(PRUNE_DELIVERIES).run({ cutoff }).changes);
  const events = db.immediate((cutoff: number, after: EventCursor) => {
    const rows = db.st(OLD_EVENTS).all({ cutoff, afterAt: after.at, afterId: after.id }) as {
      id: string;
      created_at: number;
    }[];
    if (rows.length > 0) {
      db.st(DELETE_EVENTS_WITHOUT_DELIVERIES).run({ ids: JSON.stringify(rows.map((r) => r.id)) });
      const last = rows[rows.length - 1]!;
      after.at = last.created_at;
      after.id = last.id;
    }
    return rows.length;
  });
  const walks = eventWalks();
  return async (cutoff: number): Promise<number> => {
    const removed = await inSteps(() => deliveries(cutoff), SQLITE_STEP_ROWS);
    const after = walks.start(cutoff);
    await inSteps(() => events(cutoff, after), SQLITE_STEP_ROWS);
    return removed;
  };
}
