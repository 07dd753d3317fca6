/** Renews leases the caller still holds (design I3); answers which it still holds. */
import type { LeaseRef } from '../port.js';
import type { Pg } from './connection.js';

/**
 * Leases `$1`/`$2` (delivery ids and tokens) now expire at `$3`, each only while its token is the
 * caller's: a lease taken over meanwhile is not renewed (nor answered).
 *
 * The deliveries are locked first, in id order, then their leases, as claims, records and
 * deletions take them: locking the leases alone, a renewal could hold one lease a claim was about
 * to take over while waiting for another lease the claim held. Statements that hold an endpoint's
 * deliveries in no set order (the hold of a disabling or a pause, a re-enabling) can still meet a
 * renewal the other way round; PostgreSQL then aborts one of the two, and each runs again. The
 * locked ids are read as an array, an InitPlan run before the first lease is read, as the record's
 * parts meet (see RECORD_ATTEMPTS_FAST).
 */
export const RENEW_LEASES = `
WITH held AS (SELECT * FROM unnest($1::text[], $2::text[]) AS h (delivery_id, token)),
locked AS MATERIALIZED (
  SELECT d.id FROM deliveries d WHERE d.id IN (SELECT delivery_id FROM held) ORDER BY d.id FOR NO KEY UPDATE
)
UPDATE leases l SET expires_at = $3::bigint
FROM held h
WHERE l.delivery_id = h.delivery_id AND l.token = h.token
  AND l.delivery_id = ANY (ARRAY(SELECT id FROM locked))
RETURNING l.delivery_id, l.token`;

export async function renewLeases(
  pg: Pg,
  leases: readonly LeaseRef[],
  expiresAt: number,
): Promise<LeaseRef[]> {
  if (leases.length === 0) return [];
  const rows = await pg.deadlockRetried(() =>
    pg.prepared('renew_leases', RENEW_LEASES, [
      leases.map((l) => l.deliveryId),
      leases.map((l) => l.leaseToken),
      expiresAt,
    ]),
  );
  return rows.map((r) => ({ deliveryId: r.delivery_id as string, leaseToken: r.token as string }));
}
