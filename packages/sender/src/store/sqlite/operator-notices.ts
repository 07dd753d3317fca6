/** The operator notices' outbox on SQLite (design D50): insert, claim under a lease, record. */
import type { NewNotice } from '../../domain/operator-notice.js';
import { newLeaseToken } from '../lease.js';
import type { NoticeOutcome } from '../notice-port.js';
import { noticeRecordParams, toNotice } from '../notice-record.js';
import type { Row } from '../rows.js';
import { countParam, type SqliteDb } from './database.js';

const INSERT_NOTICE = `
INSERT INTO operator_notices (id, type, body, status, attempts, next_attempt_at, created_at, updated_at)
VALUES (@id, @type, @body, 'pending', 0, @createdAt, @createdAt, @createdAt)`;
export const CLAIM_NOTICES = `
UPDATE operator_notices SET lease_token = @token, lease_expires_at = @expiresAt, updated_at = @now
WHERE id IN (
  SELECT id FROM operator_notices INDEXED BY operator_notices_due
  WHERE status IN ('pending', 'awaiting_retry') AND next_attempt_at <= @now
    AND (lease_expires_at IS NULL OR lease_expires_at <= @now)
  ORDER BY next_attempt_at LIMIT ${countParam('limit')})
RETURNING id, type, body, attempts, lease_token`;
const RECORD_NOTICE = `
UPDATE operator_notices SET status = @status, attempts = @attempts, next_attempt_at = @nextAttemptAt,
  lease_token = NULL, lease_expires_at = NULL, last_status_code = @statusCode, last_error = @error,
  updated_at = @now
WHERE id = @id AND lease_token = @token AND attempts = @attemptsBefore`;

/** Called inside the transaction that changes the endpoint. */
export function insertNotice(db: SqliteDb, notice: NewNotice): void {
  db.st(INSERT_NOTICE).run({ ...notice, body: Buffer.from(notice.body) });
}

export function claimNotices(db: SqliteDb) {
  return db.immediate(({ now, limit, leaseMs }: { now: number; limit: number; leaseMs: number }) =>
    (db.st(CLAIM_NOTICES).all({ now, limit, expiresAt: now + leaseMs, token: newLeaseToken() }) as Row[]).map(
      toNotice,
    ),
  );
}

export function recordNotice(db: SqliteDb, outcome: NoticeOutcome) {
  const params = noticeRecordParams(outcome);
  return db.st(RECORD_NOTICE).run(params).changes === 1 ? params.status : null;
}
