/**
 * The operator notices' outbox (design D50): written by the stores in the transaction that
 * changes the endpoint, claimed under a lease and recorded by compare-and-set like deliveries
 * (design I3), on the deliveries' schedule.
 */
import type { NoticeType } from '../domain/operator-notice.js';
import type { RetrySchedule } from '../domain/schedule.js';

export interface ClaimedNotice {
  id: string;
  type: NoticeType;
  /** The bytes stored with the notice: every attempt signs and sends them. */
  body: Uint8Array;
  /** Attempts made before this one. */
  attempts: number;
  leaseToken: string;
}

export interface NoticeOutcome {
  notice: ClaimedNotice;
  succeeded: boolean;
  statusCode: number | null;
  /** What went wrong, for the log; null on success. */
  error: string | null;
  /** When the attempt finished: the retry delay counts from here (design R12). */
  now: number;
  schedule: RetrySchedule;
}

export interface NoticeOutbox {
  /** Leases up to `limit` notices due at `now`, the oldest due first. */
  claimNotices(request: { now: number; limit: number; leaseMs: number }): Promise<ClaimedNotice[]>;
  /**
   * Records an attempt's outcome if the lease still holds: delivered, or the next attempt due on
   * the schedule, or failed after the last. Resolves with the status, or null when the lease was lost.
   */
  recordNotice(outcome: NoticeOutcome): Promise<'delivered' | 'awaiting_retry' | 'failed' | null>;
}
