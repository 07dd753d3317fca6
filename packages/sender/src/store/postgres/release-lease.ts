/** Gives a leased delivery back unattempted (graceful shutdown): only while the lease is the caller's. */
import type { Pg } from './connection.js';

/** Ends lease `$2` of delivery `$1` with no attempt recorded: the lease row is all a lease is. */
const RELEASE_LEASE = `DELETE FROM leases WHERE delivery_id = $1 AND token = $2`;

/** Resolves with the number of leases it ended (0 or 1). */
export async function releaseLease(pg: Pg, deliveryId: string, leaseToken: string): Promise<number> {
  return (await pg.pool.query(RELEASE_LEASE, [deliveryId, leaseToken])).rowCount ?? 0;
}
