/** Endpoints: create, read, list and patch, always scoped to their account (deleting: delete-endpoint.ts). */
import type { EndpointPatch, NewEndpoint } from '../port.js';
import type { EndpointRecord } from '../records.js';
import { type Row, toEndpoint } from '../rows.js';
import { KEPT_ENDPOINT_SQL } from '../sql-rules.js';
import type { SqliteDb } from './database.js';

const INSERT_ENDPOINT = `
INSERT INTO endpoints (id, account_id, url, events, secret, description, standard_webhooks, created_at, updated_at)
VALUES (@id, @accountId, @url, @events, @secret, @description, @standardWebhooks, @now, @now)`;
export const SELECT_ENDPOINT = `SELECT * FROM endpoints WHERE id = ? AND account_id = ? AND ${KEPT_ENDPOINT_SQL}`;
export const SELECT_ENDPOINTS_OF_ACCOUNT = `SELECT * FROM endpoints WHERE account_id = ? AND ${KEPT_ENDPOINT_SQL} ORDER BY id`;
const UPDATE_ENDPOINT = `
UPDATE endpoints SET url = @url, events = @events, secret = @secret, previous_secret = @previousSecret,
  previous_secret_expires_at = @previousSecretExpiresAt, description = @description,
  standard_webhooks = @standardWebhooks, updated_at = @now
WHERE id = @id AND account_id = @accountId AND ${KEPT_ENDPOINT_SQL}`;
/** Previous secrets past their grace (design D38): never handed out, now gone from the row too. */
export const DROP_EXPIRED_SECRETS = `
UPDATE endpoints SET previous_secret = NULL, previous_secret_expires_at = NULL
WHERE previous_secret_expires_at <= ?`;

const COUNT_ENDPOINTS_OF_ACCOUNT = `SELECT count(*) AS n FROM endpoints WHERE account_id = ? AND ${KEPT_ENDPOINT_SQL}`;

/** The count and the insert in one write transaction: no other creation runs between them. */
export function createEndpoint(db: SqliteDb) {
  return db.immediate((input: NewEndpoint, admit?: (existing: number) => void): EndpointRecord => {
    admit?.((db.st(COUNT_ENDPOINTS_OF_ACCOUNT).get(input.accountId) as Row).n as number);
    db.st(INSERT_ENDPOINT).run({
      ...input,
      events: JSON.stringify(input.events),
      standardWebhooks: input.standardWebhooks ? 1 : 0,
    });
    return toEndpoint(db.st(SELECT_ENDPOINT).get(input.id, input.accountId) as Row);
  });
}

export function getEndpoint(db: SqliteDb, accountId: string, id: string): EndpointRecord | null {
  const row = db.st(SELECT_ENDPOINT).get(id, accountId) as Row | undefined;
  return row ? toEndpoint(row) : null;
}

export function listEndpoints(db: SqliteDb, accountId: string): EndpointRecord[] {
  return (db.st(SELECT_ENDPOINTS_OF_ACCOUNT).all(accountId) as Row[]).map(toEndpoint);
}

/** Read and write in one transaction, so two processes on one file cannot lose a change. */
export function updateEndpoint(db: SqliteDb) {
  return db.immediate(
    (accountId: string, id: string, patch: EndpointPatch, now: number): EndpointRecord | null => {
      const current = getEndpoint(db, accountId, id);
      if (!current) return null;
      // A new secret keeps the one it replaces, as stored, until the expiry given (design D38).
      const rotated = patch.secret !== undefined;
      const keepUntil = patch.previousSecretExpiresAt ?? null;
      db.st(UPDATE_ENDPOINT).run({
        id,
        accountId,
        url: patch.url ?? current.url,
        events: JSON.stringify(patch.events ?? current.events),
        secret: patch.secret ?? current.secret,
        previousSecret: rotated ? (keepUntil === null ? null : current.secret) : current.previousSecret,
        previousSecretExpiresAt: rotated ? keepUntil : current.previousSecretExpiresAt,
        description: patch.description === undefined ? current.description : patch.description,
        standardWebhooks: (patch.standardWebhooks ?? current.standardWebhooks) ? 1 : 0,
        now,
      });
      return getEndpoint(db, accountId, id);
    },
  );
}

export function dropExpiredSecrets(db: SqliteDb, now: number): number {
  return db.st(DROP_EXPIRED_SECRETS).run(now).changes;
}
