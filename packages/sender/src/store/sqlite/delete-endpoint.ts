/**
 * Deleting an endpoint (design D78): first marked (disabled, and gone for every read of endpoints,
 * fan-out included), then its deliveries removed a bounded step at a time, each step a transaction
 * of its own, then the endpoint itself. One statement deleting an endpoint of a million deliveries
 * held the event loop and the write lock for seconds, every tenant waiting behind it. A deletion
 * cut short resumes where it ended.
 */
import type { EndpointRef } from '../port.js';
import { endpointDeliveriesQueuedFirstSql } from '../sql-rules.js';
import { countParam, type SqliteDb } from './database.js';
import { sqliteStepRows } from './step-rows.js';

const MARK_DELETED = `
UPDATE endpoints SET deleted_at = coalesce(deleted_at, @now), enabled = 0, updated_at = @now
WHERE id = @id AND account_id = @accountId`;
/** Only a marked endpoint's, its queued ones first; attempts go with their deliveries by cascade. */
const DELETE_DELIVERIES = `
DELETE FROM deliveries
WHERE id IN (${endpointDeliveriesQueuedFirstSql('@id', countParam('limit'))})
  AND EXISTS (SELECT 1 FROM endpoints e WHERE e.id = @id AND e.account_id = @accountId AND e.deleted_at IS NOT NULL)`;
/** Any delivery left goes by cascade (none, once the steps are done: fan-out makes none after the mark). */
const DELETE_ENDPOINT = `DELETE FROM endpoints WHERE id = ? AND account_id = ?`;
const BEING_DELETED = `
SELECT id, account_id FROM endpoints INDEXED BY endpoints_being_deleted WHERE deleted_at IS NOT NULL
ORDER BY id LIMIT ${countParam('limit')}`;

export function markEndpointDeleted(db: SqliteDb) {
  return db.immediate(
    (accountId: string, id: string, now: number): boolean =>
      db.st(MARK_DELETED).run({ id, accountId, now }).changes > 0,
  );
}

export function deleteEndpointStep(db: SqliteDb) {
  return db.immediate(
    (accountId: string, id: string, limit: number): number =>
      db.st(DELETE_DELIVERIES).run({ id, accountId, limit: sqliteStepRows(limit) }).changes,
  );
}

export function deleteEndpoint(db: SqliteDb, accountId: string, id: string): boolean {
  return db.st(DELETE_ENDPOINT).run(id, accountId).changes > 0;
}

export function endpointsBeingDeleted(db: SqliteDb, limit: number): EndpointRef[] {
  return (db.st(BEING_DELETED).all({ limit }) as { id: string; account_id: string }[]).map((r) => ({
    id: r.id,
    accountId: r.account_id,
  }));
}
