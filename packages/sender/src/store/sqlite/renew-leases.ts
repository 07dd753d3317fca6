/** Renews leases the caller still holds (design I3); answers which it still holds. */
import type { LeaseRef } from '../port.js';
import type { SqliteDb } from './database.js';

/** `@leases`: a JSON array of [delivery id, token]. A lease ended or taken over is left alone. */
const RENEW_LEASES = `
UPDATE deliveries SET lease_expires_at = @expiresAt
WHERE (id, lease_token) IN (
  SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(@leases))
RETURNING id, lease_token`;

export function renewLeases(db: SqliteDb, leases: readonly LeaseRef[], expiresAt: number): LeaseRef[] {
  if (leases.length === 0) return [];
  const rows = db.st(RENEW_LEASES).all({
    expiresAt,
    leases: JSON.stringify(leases.map((l) => [l.deliveryId, l.leaseToken])),
  }) as { id: string; lease_token: string }[];
  return rows.map((r) => ({ deliveryId: r.id, leaseToken: r.lease_token }));
}
