/**
 * The probes of endpoints whose circuit breaker is half-open (design D27): one delivery each, its
 * earliest due retry before its earliest new delivery (PROBE_ORDER), of an endpoint enabled and not
 * paused (one whose deliveries are being held may have some not held yet) with
 * no delivery in flight.
 */
import { PROBE_ORDER } from '../../domain/breaker.js';
import { newLeaseToken } from '../lease.js';
import type { ProbeRequest } from '../port.js';
import type { ClaimedDelivery } from '../records.js';
import { isQueuedSql } from '../sql-rules.js';
import { LEASE_DELIVERIES, readClaimed } from './claim-due.js';
import type { SqliteDb } from './database.js';
import type { WriteQueue } from './write-queue.js';

/**
 * The endpoint's first due, unleased delivery of `@status`, from its queued deliveries by status
 * and due time (migration 13), unless one of its deliveries is in flight: the live leases are read
 * from their own index (`deliveries_leased`), as many rows as are in flight, however long the
 * endpoint's backlog.
 */
export const SELECT_PROBE = `
SELECT d.id FROM endpoints e CROSS JOIN deliveries d INDEXED BY deliveries_queued_by_endpoint
WHERE e.id = @endpoint AND e.enabled = 1 AND e.paused = 0
  AND d.endpoint_id = e.id AND d.status = @status AND ${isQueuedSql('d.status')}
  AND d.next_attempt_at <= @now
  AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= @now)
  AND NOT EXISTS (
    SELECT 1 FROM deliveries l INDEXED BY deliveries_leased
    WHERE l.lease_expires_at IS NOT NULL AND l.lease_expires_at > @now AND l.endpoint_id = e.id)
ORDER BY d.next_attempt_at
LIMIT 1`;

/** A write of the turn's transaction (write-queue.ts), as claimDue's. */
export function claimProbes(db: SqliteDb, write: WriteQueue) {
  const claimOnce = ({ now, leaseMs, endpointIds }: ProbeRequest): ClaimedDelivery[] => {
    const ids: string[] = [];
    for (const endpoint of new Set(endpointIds)) {
      for (const status of PROBE_ORDER) {
        const id = db.st(SELECT_PROBE).pluck().get({ endpoint, status, now }) as string | undefined;
        if (id !== undefined) {
          ids.push(id);
          break;
        }
      }
    }
    if (ids.length === 0) return [];
    const token = newLeaseToken();
    const expiresAt = now + leaseMs;
    const picked = JSON.stringify(ids);
    const claimed = readClaimed(db, now, picked, [token, expiresAt]);
    db.st(LEASE_DELIVERIES).run({ token, expiresAt, ids: picked });
    return claimed;
  };
  return async (request: ProbeRequest): Promise<ClaimedDelivery[]> =>
    request.endpointIds.length === 0 ? [] : (await write(() => claimOnce(request))).value;
}
