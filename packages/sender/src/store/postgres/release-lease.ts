/**
 * Gives leased deliveries back unattempted (graceful shutdown, a claim that could not read its
 * bodies): only while the lease is the caller's.
 */
import type { Pg } from './connection.js';

/** Ends lease `$2` of delivery `$1` with no attempt recorded: the lease row is all a lease is. */
const RELEASE_LEASE = `DELETE FROM leases WHERE delivery_id = $1 AND token = $2`;

/** Resolves with the number of leases it ended (0 or 1). */
export async function releaseLease(pg: Pg, deliveryId: string, leaseToken: string): Promise<number> {
  return (await pg.pool.query(RELEASE_LEASE, [deliveryId, leaseToken])).rowCount ?? 0;
}

/** RELEASE_LEASE for each delivery `$1[i]` with token `$2[i]`. */
const RELEASE_LEASES = `
DELETE FROM leases WHERE (delivery_id, token) IN (SELECT * FROM unnest($1::text[], $2::text[]))`;

/** releaseLease for many, in one statement. */
export async function releaseLeases(
  pg: Pg,
  leases: { deliveryId: string; leaseToken: string }[],
): Promise<number> {
  const ids = leases.map((l) => l.deliveryId);
  const tokens = leases.map((l) => l.leaseToken);
  return (await pg.pool.query(RELEASE_LEASES, [ids, tokens])).rowCount ?? 0;
}
