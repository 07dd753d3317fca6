/**
 * Pausing and resuming an endpoint (design D34). A pause holds the endpoint's claimable deliveries:
 * held rows are outside the due-time index, so the claim never reads them however many wait.
 * Resuming makes them claimable at their own due times, unless the endpoint is disabled, whose
 * re-enabling resumes them instead. Either moves the first step of them in the transaction that
 * changes the flag, and lists the endpoint for the rest (settle-queue.ts).
 */
import { resumedAnswer } from '../flag-change.js';
import type { Resumed, Settling } from '../port.js';
import { PRUNE_STEP } from '../prune-steps.js';
import type { EndpointRecord } from '../records.js';
import type { Row } from '../rows.js';
import { KEPT_ENDPOINT_SQL } from '../sql-rules.js';
import type { SqliteDb } from './database.js';
import { getEndpoint } from './endpoints.js';
import { listAndMove } from './settle-queue.js';

const PAUSE_ENDPOINT = `
UPDATE endpoints SET paused = 1, paused_at = @now, updated_at = @now
WHERE id = @id AND account_id = @accountId AND paused = 0 AND ${KEPT_ENDPOINT_SQL}`;
const RESUME_ENDPOINT = `
UPDATE endpoints SET paused = 0, paused_at = NULL, updated_at = @now
WHERE id = @id AND account_id = @accountId AND paused = 1 AND ${KEPT_ENDPOINT_SQL} RETURNING enabled`;

export function pauseEndpoint(db: SqliteDb) {
  return db.immediate((accountId: string, id: string, now: number): EndpointRecord | null => {
    if (db.st(PAUSE_ENDPOINT).run({ accountId, id, now }).changes > 0) {
      listAndMove(db, { id, accountId }, 'hold', { now, limit: PRUNE_STEP });
    }
    return getEndpoint(db, accountId, id);
  });
}

export function resumeEndpoint(db: SqliteDb) {
  return db.immediate((accountId: string, id: string, now: number): (Resumed & Settling) | null => {
    const row = db.st(RESUME_ENDPOINT).get({ accountId, id, now }) as Row | undefined;
    const moved =
      row && row.enabled === 1
        ? listAndMove(db, { id, accountId }, 'resume', { now, limit: PRUNE_STEP })
        : null;
    const endpoint = getEndpoint(db, accountId, id);
    return endpoint ? resumedAnswer(endpoint, moved) : null;
  });
}
