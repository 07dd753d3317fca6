/** The operator notices' outbox on PostgreSQL (design D50): insert, claim under a lease, record. */
import type pg from 'pg';
import type { NewNotice } from '../../domain/operator-notice.js';
import { newLeaseToken } from '../lease.js';
import type { ClaimedNotice, NoticeOutcome } from '../notice-port.js';
import { noticeRecordParams, toNotice } from '../notice-record.js';
import type { Pg } from './connection.js';

const INSERT_NOTICE = `
INSERT INTO operator_notices (id, type, body, status, attempts, next_attempt_at, created_at, updated_at)
VALUES ($1, $2, $3, 'pending', 0, $4, $4, $4)`;
/** Claimed as deliveries are (design C4): locked rows are skipped, so notifiers never wait on each other. */
const CLAIM_NOTICES = `
WITH due AS (
  SELECT id FROM operator_notices
  WHERE status IN ('pending', 'awaiting_retry') AND next_attempt_at <= $1
    AND (lease_expires_at IS NULL OR lease_expires_at <= $1)
  ORDER BY next_attempt_at LIMIT $2
  FOR UPDATE SKIP LOCKED
)
UPDATE operator_notices n SET lease_token = $3, lease_expires_at = $4, updated_at = $1
FROM due WHERE n.id = due.id
RETURNING n.id, n.type, n.body, n.attempts, n.lease_token`;
const RECORD_NOTICE = `
UPDATE operator_notices SET status = $4, attempts = $5, next_attempt_at = $6, lease_token = NULL,
  lease_expires_at = NULL, last_status_code = $7, last_error = $8, updated_at = $9
WHERE id = $1 AND lease_token = $2 AND attempts = $3
RETURNING status`;

/** Called inside the transaction that changes the endpoint. */
export async function insertNotice(client: pg.ClientBase, notice: NewNotice): Promise<void> {
  await client.query(INSERT_NOTICE, [notice.id, notice.type, Buffer.from(notice.body), notice.createdAt]);
}

export async function claimNotices(
  pg: Pg,
  { now, limit, leaseMs }: { now: number; limit: number; leaseMs: number },
): Promise<ClaimedNotice[]> {
  return (await pg.rows(CLAIM_NOTICES, [now, limit, newLeaseToken(), now + leaseMs])).map(toNotice);
}

export async function recordNotice(pg: Pg, outcome: NoticeOutcome) {
  const p = noticeRecordParams(outcome);
  const rows = await pg.rows(RECORD_NOTICE, [
    p.id,
    p.token,
    p.attemptsBefore,
    p.status,
    p.attempts,
    p.nextAttemptAt,
    p.statusCode,
    p.error,
    p.now,
  ]);
  return rows.length === 1 ? p.status : null;
}
