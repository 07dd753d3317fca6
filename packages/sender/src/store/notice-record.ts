/** What the stores write for a notice's attempt: the deliveries' own decision (design R12, R13). */
import { decideAfterAttempt } from '../domain/delivery-state.js';
import type { ClaimedNotice, NoticeOutcome } from './notice-port.js';
import type { Row } from './rows.js';

/** The parameters of a notice's compare-and-set record, by name. */
export function noticeRecordParams({ notice, succeeded, statusCode, error, now, schedule }: NoticeOutcome) {
  const decision = decideAfterAttempt(notice.attempts, { ok: succeeded }, now, schedule);
  return {
    id: notice.id,
    token: notice.leaseToken,
    attemptsBefore: notice.attempts,
    status: decision.status,
    attempts: decision.attempts,
    nextAttemptAt: decision.nextAttemptAt,
    statusCode,
    error: error === null ? null : error.slice(0, 500),
    now,
  };
}

/** A claimed notice's row, as both stores return it. */
export const toNotice = (row: Row): ClaimedNotice => ({
  id: row.id as string,
  type: row.type as ClaimedNotice['type'],
  body: new Uint8Array(row.body as Buffer),
  attempts: Number(row.attempts),
  leaseToken: row.lease_token as string,
});
