/** Endpoints: create, read, list and patch, always scoped to their account (deleting: delete-endpoint.ts). */
import type { EndpointPatch, NewEndpoint } from '../port.js';
import type { EndpointRecord } from '../records.js';
import { toEndpoint } from '../rows.js';
import { KEPT_ENDPOINT_SQL } from '../sql-rules.js';
import type { Pg } from './connection.js';

const INSERT_ENDPOINT = `
INSERT INTO endpoints (id, account_id, url, events, secret, description, created_at, updated_at, standard_webhooks)
VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $7, $8)
RETURNING *`;
const SELECT_ENDPOINT = `SELECT * FROM endpoints WHERE id = $1 AND account_id = $2 AND ${KEPT_ENDPOINT_SQL}`;
const SELECT_ENDPOINTS_OF_ACCOUNT = `SELECT * FROM endpoints WHERE account_id = $1 AND ${KEPT_ENDPOINT_SQL} ORDER BY id`;
/**
 * One statement, so a concurrent patch of another field is never lost. `$6`: set the description.
 * A new secret (`$5`) keeps the one it replaces, as stored, until `$10` (design D38): the right-hand
 * sides read the row as it was, so `secret` there is the replaced one.
 */
const UPDATE_ENDPOINT = `
UPDATE endpoints SET
  url = coalesce($3::text, url),
  events = coalesce($4::jsonb, events),
  secret = coalesce($5::text, secret),
  previous_secret = CASE WHEN $5::text IS NULL THEN previous_secret WHEN $10::bigint IS NULL THEN NULL ELSE secret END,
  previous_secret_expires_at = CASE WHEN $5::text IS NULL THEN previous_secret_expires_at ELSE $10::bigint END,
  description = CASE WHEN $6::boolean THEN $7::text ELSE description END,
  standard_webhooks = coalesce($9::boolean, standard_webhooks),
  updated_at = $8
WHERE id = $1 AND account_id = $2 AND ${KEPT_ENDPOINT_SQL}
RETURNING *`;
/** Previous secrets past their grace (design D38): never handed out, now gone from the row too. */
export const DROP_EXPIRED_SECRETS = `
UPDATE endpoints SET previous_secret = NULL, previous_secret_expires_at = NULL
WHERE previous_secret_expires_at <= $1`;

/**
 * Creations for one account queue on this lock until their transactions end, in every process on
 * the database, so each counts the endpoints the ones before it committed.
 */
const LOCK_ACCOUNT_ENDPOINTS = `SELECT pg_advisory_xact_lock(hashtextextended('linkhooks endpoints of ' || $1, 0))`;
const COUNT_ENDPOINTS_OF_ACCOUNT = `SELECT count(*)::int AS n FROM endpoints WHERE account_id = $1 AND ${KEPT_ENDPOINT_SQL}`;

export async function createEndpoint(
  pg: Pg,
  input: NewEndpoint,
  admit?: (existing: number) => void,
): Promise<EndpointRecord> {
  const values = [
    input.id,
    input.accountId,
    input.url,
    JSON.stringify(input.events),
    input.secret,
    input.description,
    input.now,
    input.standardWebhooks ?? false,
  ];
  if (!admit) return toEndpoint((await pg.durableRows(INSERT_ENDPOINT, values))[0]!);
  return pg.durableTx(async (client) => {
    await client.query(LOCK_ACCOUNT_ENDPOINTS, [input.accountId]);
    admit((await client.query(COUNT_ENDPOINTS_OF_ACCOUNT, [input.accountId])).rows[0].n);
    return toEndpoint((await client.query(INSERT_ENDPOINT, values)).rows[0]);
  });
}

export async function getEndpoint(pg: Pg, accountId: string, id: string): Promise<EndpointRecord | null> {
  const [row] = await pg.rows(SELECT_ENDPOINT, [id, accountId]);
  return row ? toEndpoint(row) : null;
}

export async function listEndpoints(pg: Pg, accountId: string): Promise<EndpointRecord[]> {
  return (await pg.rows(SELECT_ENDPOINTS_OF_ACCOUNT, [accountId])).map(toEndpoint);
}

export async function updateEndpoint(
  pg: Pg,
  accountId: string,
  id: string,
  patch: EndpointPatch,
  now: number,
): Promise<EndpointRecord | null> {
  const [row] = await pg.durableRows(UPDATE_ENDPOINT, [
    id,
    accountId,
    patch.url ?? null,
    patch.events === undefined ? null : JSON.stringify(patch.events),
    patch.secret ?? null,
    patch.description !== undefined,
    patch.description ?? null,
    now,
    patch.standardWebhooks ?? null,
    patch.previousSecretExpiresAt ?? null,
  ]);
  return row ? toEndpoint(row) : null;
}

export async function dropExpiredSecrets(pg: Pg, now: number): Promise<number> {
  return (await pg.pool.query(DROP_EXPIRED_SECRETS, [now])).rowCount ?? 0;
}
