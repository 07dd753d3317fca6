/** Gives a leased delivery back unattempted (graceful shutdown): only while the lease is the caller's. */
import type { Pg } from './connection.js';

/**
 * Ends lease `$2` of delivery `$1` with no attempt recorded. The delivery row is locked before the
 * lease row, the order claims and records take them in, so a release racing a record or a claim
 * of the same delivery waits instead of deadlocking.
 */
const RELEASE_LEASE = `
WITH target AS MATERIALIZED (SELECT id FROM deliveries WHERE id = $1 FOR NO KEY UPDATE),
released AS (
  DELETE FROM leases WHERE delivery_id IN (SELECT id FROM target) AND token = $2 RETURNING delivery_id
)
UPDATE deliveries SET lease_expires_at = NULL WHERE id IN (SELECT delivery_id FROM released)`;

/** Resolves with the number of leases it ended (0 or 1). */
export async function releaseLease(pg: Pg, deliveryId: string, leaseToken: string): Promise<number> {
  return (await pg.pool.query(RELEASE_LEASE, [deliveryId, leaseToken])).rowCount ?? 0;
}
