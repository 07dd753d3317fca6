/** Renews leases the caller still holds (design I3); answers which it still holds. */
import type { LeaseRef } from '../port.js';
import type { Pg } from './connection.js';

/**
 * Leases `$1`/`$2` (delivery ids and tokens) now expire at `$3`, in the lease row and in the
 * delivery's copy a claim reads. The delivery rows are written first, the order claims, records
 * and releases lock them in; the lease's token is checked again on the row as it is locked, so a
 * lease taken over meanwhile is not renewed (nor answered).
 */
const RENEW_LEASES = `
WITH held AS (SELECT * FROM unnest($1::text[], $2::text[]) AS h (delivery_id, token)),
fenced AS (
  UPDATE deliveries d SET lease_expires_at = $3::bigint
  FROM leases l JOIN held h ON h.delivery_id = l.delivery_id AND h.token = l.token
  WHERE d.id = l.delivery_id
  RETURNING d.id
)
UPDATE leases l SET expires_at = $3::bigint
FROM fenced f, held h
WHERE l.delivery_id = f.id AND h.delivery_id = l.delivery_id AND h.token = l.token
RETURNING l.delivery_id, l.token`;

export async function renewLeases(
  pg: Pg,
  leases: readonly LeaseRef[],
  expiresAt: number,
): Promise<LeaseRef[]> {
  if (leases.length === 0) return [];
  const rows = await pg.prepared('renew_leases', RENEW_LEASES, [
    leases.map((l) => l.deliveryId),
    leases.map((l) => l.leaseToken),
    expiresAt,
  ]);
  return rows.map((r) => ({ deliveryId: r.delivery_id as string, leaseToken: r.token as string }));
}
