/**
 * Re-enabling (design D2): counter reset, held deliveries resumed, skipped ones replayed if asked.
 * A paused endpoint stays paused (design D34): its held deliveries wait for the resume, and the
 * replayed ones join them as held. The first step of them moves in the transaction that re-enables
 * it, the rest in steps of their own (settle-queue.ts), each reading the endpoint's held or skipped
 * deliveries from their own index, never its whole log (design D3).
 */
import type { NoticeRules } from '../../domain/notice-rules.js';
import { enabledNotice } from '../../domain/operator-notice.js';
import { reenabledAnswer } from '../flag-change.js';
import type { Reenabled, Settling } from '../port.js';
import { PRUNE_STEP } from '../prune-steps.js';
import { type Row, toEndpoint } from '../rows.js';
import { KEPT_ENDPOINT_SQL } from '../sql-rules.js';
import type { SqliteDb } from './database.js';
import { SELECT_ENDPOINT } from './endpoints.js';
import { insertNotice } from './operator-notices.js';
import { listAndMove } from './settle-queue.js';

const REENABLE_ENDPOINT = `
UPDATE endpoints SET enabled = 1, consecutive_failures = 0, disabled_reason = NULL, disabled_at = NULL, updated_at = ?
WHERE id = ? AND account_id = ? AND ${KEPT_ENDPOINT_SQL} RETURNING *`;

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
    ): (Reenabled & Settling) | null => {
      const before = db.st(SELECT_ENDPOINT).get(id, accountId) as Row | undefined;
      if (!before) return null;
      const endpoint = toEndpoint(db.st(REENABLE_ENDPOINT).get(now, id, accountId) as Row);
      // design D50: the operator hears of a re-enabling, not of a reset of an enabled endpoint.
      const notice = notices && before.enabled === 0 ? enabledNotice(endpoint, notices, now) : null;
      if (notice) insertNotice(db, notice);
      const moved = listAndMove(db, endpoint, 'reenable', { now, limit: PRUNE_STEP, replay: replaySkipped });
      return reenabledAnswer(endpoint, moved, notice !== null);
    },
  );
}
