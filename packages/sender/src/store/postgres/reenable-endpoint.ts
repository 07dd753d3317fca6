/**
 * Re-enabling (design D2): counter reset, held deliveries resumed, skipped ones replayed if asked.
 * A paused endpoint stays paused (design D34): its held deliveries wait for the resume, and the
 * replayed ones join them as held. The first step of them moves in the transaction that re-enables
 * it, the rest in steps of their own (settle-queue.ts).
 */
import type { NoticeRules } from '../../domain/notice-rules.js';
import { enabledNotice } from '../../domain/operator-notice.js';
import { reenabledAnswer } from '../flag-change.js';
import type { Reenabled, Settling } from '../port.js';
import { PRUNE_STEP } from '../prune-steps.js';
import { toEndpoint } from '../rows.js';
import { KEPT_ENDPOINT_SQL } from '../sql-rules.js';
import type { Pg } from './connection.js';
import { insertNotice } from './operator-notices.js';
import { listAndMove } from './settle-queue.js';

/** `was_enabled`: the row's state before, read under the update's lock. */
const REENABLE_ENDPOINT = `
WITH before AS (SELECT id, enabled FROM endpoints WHERE id = $1 AND account_id = $2 AND ${KEPT_ENDPOINT_SQL} FOR UPDATE)
UPDATE endpoints e SET enabled = true, consecutive_failures = 0, disabled_reason = NULL, disabled_at = NULL,
  updated_at = $3
FROM before WHERE e.id = before.id
RETURNING e.*, before.enabled AS was_enabled`;
export async function reenableEndpoint(
  pg: Pg,
  accountId: string,
  id: string,
  { replaySkipped, now, notices }: { replaySkipped: boolean; now: number; notices?: NoticeRules | undefined },
): Promise<(Reenabled & Settling) | null> {
  return pg.durableTx(async (client) => {
    const [row] = (await client.query(REENABLE_ENDPOINT, [id, accountId, now])).rows;
    if (!row) return null;
    const endpoint = toEndpoint(row);
    // design D50: the operator hears of a re-enabling, not of a reset of an enabled endpoint.
    const notice = notices && row.was_enabled === false ? enabledNotice(endpoint, notices, now) : null;
    if (notice) await insertNotice(client, notice);
    const moved = await listAndMove(client, pg.schema, endpoint, 'reenable', {
      now,
      limit: PRUNE_STEP,
      replay: replaySkipped,
    });
    return reenabledAnswer(endpoint, moved, notice !== null);
  });
}
