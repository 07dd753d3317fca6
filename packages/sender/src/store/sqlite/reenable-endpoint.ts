/**
 * Re-enabling (design D2): counter reset, held deliveries resumed, skipped ones replayed if asked.
 * A paused endpoint stays paused (design D34): its held deliveries wait for the resume, and the
 * replayed ones join them as held. Each statement names the partial index of the rows it walks, so
 * it reads the endpoint's held or skipped deliveries only, never its whole log (design D3); the
 * resume repeats that index's condition, which SQLite must see written to use it.
 */
import { enabledNotice, type NoticeRules } from '../../domain/operator-notice.js';
import type { Reenabled } from '../port.js';
import { type Row, toEndpoint } from '../rows.js';
import { isQueuedSql, KEPT_ENDPOINT_SQL, RESUME_STATUS_SQL } from '../sql-rules.js';
import type { SqliteDb } from './database.js';
import { lowerDue } from './endpoint-due.js';
import { SELECT_ENDPOINT } from './endpoints.js';
import { insertNotice } from './operator-notices.js';

const REENABLE_ENDPOINT = `
UPDATE endpoints SET enabled = 1, consecutive_failures = 0, disabled_reason = NULL, disabled_at = NULL, updated_at = ?
WHERE id = ? AND account_id = ? AND ${KEPT_ENDPOINT_SQL} RETURNING *`;
/** Unlike a resume (pause-endpoint.ts), which keeps each held delivery's due time, a re-enabling
 * makes them due now: their retries were held by the disabling, not scheduled. */
export const RESUME_HELD_NOW = `
UPDATE deliveries INDEXED BY deliveries_queued_by_endpoint
SET status = ${RESUME_STATUS_SQL}, next_attempt_at = @now, updated_at = @now
WHERE endpoint_id = @id AND status = 'held' AND ${isQueuedSql('status')}`;
export const REPLAY_SKIPPED = `
UPDATE deliveries INDEXED BY deliveries_skipped
SET status = ${RESUME_STATUS_SQL}, next_attempt_at = @now, updated_at = @now
WHERE endpoint_id = @id AND status = 'skipped'`;
export const HOLD_SKIPPED = `
UPDATE deliveries INDEXED BY deliveries_skipped
SET status = 'held', next_attempt_at = @now, updated_at = @now
WHERE endpoint_id = @id AND status = 'skipped'`;

export function reenableEndpoint(db: SqliteDb) {
  return db.immediate(
    (
      accountId: string,
      id: string,
      {
        replaySkipped,
        now,
        notices,
      }: { replaySkipped: boolean; now: number; notices?: NoticeRules | undefined },
    ): Reenabled | null => {
      const before = db.st(SELECT_ENDPOINT).get(id, accountId) as Row | undefined;
      if (!before) return null;
      const endpoint = toEndpoint(db.st(REENABLE_ENDPOINT).get(now, id, accountId) as Row);
      // design D50: the operator hears of a re-enabling, not of a reset of an enabled endpoint.
      const notice = notices && before.enabled === 0 ? enabledNotice(endpoint, notices, now) : null;
      if (notice) insertNotice(db, notice);
      const resumed = endpoint.paused ? 0 : db.st(RESUME_HELD_NOW).run({ now, id }).changes;
      const replayed = !replaySkipped
        ? 0
        : db.st(endpoint.paused ? HOLD_SKIPPED : REPLAY_SKIPPED).run({ now, id }).changes;
      if (!endpoint.paused && resumed + replayed > 0) lowerDue(db, id, now);
      return { endpoint, resumed, replayed, ...(notice ? { noticed: true } : {}) };
    },
  );
}
