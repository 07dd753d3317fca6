/**
 * Re-enabling (design D2): counter reset, held deliveries resumed, skipped ones replayed if asked.
 * A paused endpoint stays paused (design D34): its held deliveries wait for the resume, and the
 * replayed ones join them as held.
 */
import { enabledNotice, type NoticeRules } from '../../domain/operator-notice.js';
import type { Reenabled } from '../port.js';
import { toEndpoint } from '../rows.js';
import { KEPT_ENDPOINT_SQL, RESUME_STATUS_SQL } from '../sql-rules.js';
import type { Pg } from './connection.js';
import { madeClaimable } from './endpoint-due.js';
import { insertNotice } from './operator-notices.js';

/** `was_enabled`: the row's state before, read under the update's lock. */
const REENABLE_ENDPOINT = `
WITH before AS (SELECT id, enabled FROM endpoints WHERE id = $1 AND account_id = $2 AND ${KEPT_ENDPOINT_SQL} FOR UPDATE)
UPDATE endpoints e SET enabled = true, consecutive_failures = 0, disabled_reason = NULL, disabled_at = NULL,
  updated_at = $3
FROM before WHERE e.id = before.id
RETURNING e.*, before.enabled AS was_enabled`;
/** `$3` is `held` (resume) or `skipped` (replay). */
const RESUME_DELIVERIES = `
UPDATE deliveries SET status = ${RESUME_STATUS_SQL}, next_attempt_at = $2, updated_at = $2
WHERE endpoint_id = $1 AND status = $3`;
const HOLD_SKIPPED = `
UPDATE deliveries SET status = 'held', next_attempt_at = $2, updated_at = $2
WHERE endpoint_id = $1 AND status = 'skipped'`;

export async function reenableEndpoint(
  pg: Pg,
  accountId: string,
  id: string,
  { replaySkipped, now, notices }: { replaySkipped: boolean; now: number; notices?: NoticeRules | undefined },
): Promise<Reenabled | null> {
  return pg.durableTx(async (client) => {
    const [row] = (await client.query(REENABLE_ENDPOINT, [id, accountId, now])).rows;
    if (!row) return null;
    const endpoint = toEndpoint(row);
    // design D50: the operator hears of a re-enabling, not of a reset of an enabled endpoint.
    const notice = notices && row.was_enabled === false ? enabledNotice(endpoint, notices, now) : null;
    if (notice) await insertNotice(client, notice);
    const count = async (sql: string, values: unknown[]) => (await client.query(sql, values)).rowCount ?? 0;
    const resumed = endpoint.paused ? 0 : await count(RESUME_DELIVERIES, [id, now, 'held']);
    const replayed = !replaySkipped
      ? 0
      : endpoint.paused
        ? await count(HOLD_SKIPPED, [id, now])
        : await count(RESUME_DELIVERIES, [id, now, 'skipped']);
    if (!endpoint.paused && resumed + replayed > 0) await madeClaimable(client, pg.schema, id, now);
    return { endpoint, resumed, replayed, ...(notice ? { noticed: true } : {}) };
  });
}
