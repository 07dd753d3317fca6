/**
 * Gives a leased delivery back unattempted (graceful shutdown, a breaker's hold-back, a request
 * given back unsent): only while the lease is the caller's.
 */
import type { SqliteDb } from './database.js';

const RELEASE_LEASE = `
UPDATE deliveries SET lease_token = NULL, lease_expires_at = NULL WHERE id = ? AND lease_token = ?`;

export function releaseLease(db: SqliteDb, deliveryId: string, leaseToken: string): void {
  db.st(RELEASE_LEASE).run(deliveryId, leaseToken);
}
