/**
 * Deleting an account (design D37): first marked (its keys revoked, the account gone for every
 * read), then its rows removed a bounded step at a time, each step a transaction of its own, so a
 * large account never holds the write lock for long. A deletion cut short resumes where it ended.
 */
import { countParam, type SqliteDb } from './database.js';
import { sqliteStepRows } from './step-rows.js';

const MARK_DELETED = `UPDATE accounts SET deleted_at = coalesce(deleted_at, @now) WHERE id = @id`;
const REVOKE_KEYS = `UPDATE api_keys SET revoked_at = @now WHERE account_id = @id AND revoked_at IS NULL`;
/** Attempts go with their deliveries by cascade. */
const DELETE_DELIVERIES = `
DELETE FROM deliveries WHERE id IN (
  SELECT id FROM deliveries INDEXED BY deliveries_by_account WHERE account_id = @id LIMIT ${countParam('limit')})`;
const DELETE_EVENTS = `
DELETE FROM events WHERE id IN (
  SELECT id FROM events INDEXED BY events_by_account WHERE account_id = @id LIMIT ${countParam('limit')})`;
const DELETE_ENDPOINTS = `DELETE FROM endpoints WHERE account_id = @id`;
const DELETE_KEYS = `DELETE FROM api_keys WHERE account_id = @id`;
const DELETE_ACCOUNT = `DELETE FROM accounts WHERE id = @id AND deleted_at IS NOT NULL`;

export function markAccountDeleted(db: SqliteDb) {
  return db.immediate((id: string, now: number): boolean => {
    if (db.st(MARK_DELETED).run({ id, now }).changes === 0) return false;
    db.st(REVOKE_KEYS).run({ id, now });
    return true;
  });
}

export function deleteAccountStep(db: SqliteDb) {
  return db.immediate((id: string, asked: number): number => {
    const limit = sqliteStepRows(asked);
    const deliveries = db.st(DELETE_DELIVERIES).run({ id, limit }).changes;
    if (deliveries > 0) return deliveries;
    const events = db.st(DELETE_EVENTS).run({ id, limit }).changes;
    if (events > 0) return events;
    return (
      db.st(DELETE_ENDPOINTS).run({ id }).changes +
      db.st(DELETE_KEYS).run({ id }).changes +
      db.st(DELETE_ACCOUNT).run({ id }).changes
    );
  });
}
