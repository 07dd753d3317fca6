/**
 * The stores' errors that mean "not now" rather than "wrong": the database refused or dropped a
 * connection, is starting, stopping or out of connections or disk, or (SQLite) its file is locked
 * by another connection or its disk full. An error of the statement itself stays a 500. The API answers them 503 with `Retry-After`, so a client sends the request again instead
 * of reading a 500 as a bug; the store is left as it was, since such an error ends the transaction
 * it struck (a publish retried with its `event_id` is taken once).
 */
import { SenderError } from '../errors.js';

/** `Retry-After` for a database that cannot be reached: pools reconnect on the next request. */
export const STORE_RETRY_AFTER_SECONDS = 2;

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'EPIPE',
]);

// pg's own errors for a connection that ended or never came (pg-pool's wait for a free one included).
const CLIENT_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect$/,
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
  /^timeout expired$/, // a new connection not made within its connection timeout (postgres/connection.ts)
];

function unavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { code?: unknown; message?: unknown; errors?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  // PostgreSQL's SQLSTATEs: a connection exception (08, but 08P01, a protocol violation: ours), too
  // many connections or a full disk (53300, 53100: not 53200 or 53400, a query's own excess), the
  // server shutting down or starting (57P01–57P03).
  if (/^08[0-9A-Z]{3}$/.test(code) && code !== '08P01') return true;
  if (code === '53300' || code === '53100' || /^57P0[123]$/.test(code)) return true;
  if (NETWORK_CODES.has(code)) return true;
  // SQLite: the file locked by another connection, or the disk full (SQLITE_LOCKED is a conflict
  // within one connection: ours).
  if (/^SQLITE_(BUSY|FULL)/.test(code)) return true;
  if (typeof e.message === 'string' && CLIENT_MESSAGES.some((m) => m.test(e.message as string))) return true;
  // Node's connect to every address of a name at once fails with each one's error.
  return Array.isArray(e.errors) && e.errors.length > 0 && e.errors.every(unavailable);
}

/** The store's "not now": 503 `store_unavailable` with `Retry-After`. */
export const unavailableError = (message: string, cause?: unknown): SenderError =>
  new SenderError('store_unavailable', message, { cause, retryAfterSeconds: STORE_RETRY_AFTER_SECONDS });

/** The 503 a store error answers with, or null when it is not one of these. */
export function storeUnavailable(error: unknown): SenderError | null {
  if (!unavailable(error)) return null;
  return unavailableError('the database cannot be reached right now; try again shortly', error);
}
