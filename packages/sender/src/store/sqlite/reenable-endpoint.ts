/**
 * Re-enabling (design D2): counter reset, held deliveries resumed, skipped ones replayed if asked.
 * A paused endpoint stays paused (design D34): its held deliveries wait for the resume, and the
 * replayed ones join them as held.
 */
import type { Reenabled } from '../port.js';
import { type Row, toEndpoint } from '../rows.js';
import { RESUME_STATUS_SQL } from '../sql-rules.js';
import type { SqliteDb } from './database.js';
import { SELECT_ENDPOINT } from './endpoints.js';

const REENABLE_ENDPOINT = `
UPDATE endpoints SET enabled = 1, consecutive_failures = 0, disabled_reason = NULL, disabled_at = NULL, updated_at = ?
WHERE id = ? AND account_id = ?`;
/** `@status` is `held` (resume) or `skipped` (replay). */
const RESUME_DELIVERIES = `
UPDATE deliveries SET status = ${RESUME_STATUS_SQL}, next_attempt_at = @now, updated_at = @now
WHERE endpoint_id = @id AND status = @status`;
const HOLD_SKIPPED = `
UPDATE deliveries SET status = 'held', next_attempt_at = @now, updated_at = @now
WHERE endpoint_id = @id AND status = 'skipped'`;

export function reenableEndpoint(db: SqliteDb) {
  return db.immediate(
    (accountId: string, id: string, replaySkipped: boolean, now: number): Reenabled | null => {
      if (db.st(REENABLE_ENDPOINT).run(now, id, accountId).changes === 0) return null;
      const endpoint = toEndpoint(db.st(SELECT_ENDPOINT).get(id, accountId) as Row);
      const resumed = endpoint.paused ? 0 : db.st(RESUME_DELIVERIES).run({ now, id, status: 'held' }).changes;
      const replayed = !replaySkipped
        ? 0
        : endpoint.paused
          ? db.st(HOLD_SKIPPED).run({ now, id }).changes
          : db.st(RESUME_DELIVERIES).run({ now, id, status: 'skipped' }).changes;
      return { endpoint, resumed, replayed };
    },
  );
}
