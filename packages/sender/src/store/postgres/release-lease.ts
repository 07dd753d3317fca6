/**
 * Gives leased deliveries back unattempted (graceful shutdown, a claim that could not read its
 * bodies): only while the lease is the caller's.
 */
import type { Pg } from './connection.js';

/**
 * Ends each lease `$2[i]` of delivery `$1[i]` with no attempt recorded, while it is still that
 * token's: the lease row is all a lease is.
 */
const RELEASE_LEASES = `
DELETE FROM leases WHERE (delivery_id, token) IN (SELECT * FROM unnest($1::text[], $2::text[]))`;

/** Resolves with the number of leases it ended (at most one a lease given). */
export async function releaseLeases(
  pg: Pg,
  leases: { deliveryId: string; leaseToken: string }[],
): Promise<number> {
  const ids = leases.map((l) => l.deliveryId);
  const tokens = leases.map((l) => l.leaseToken);
  return (await pg.pool.query(RELEASE_LEASES, [ids, tokens])).rowCount ?? 0;
}

/** releaseLeases of one (0 or 1). */
export const releaseLease = (pg: Pg, deliveryId: string, leaseToken: string): Promise<number> =>
  releaseLeases(pg, [{ deliveryId, leaseToken }]);
