/**
 * Every error the API answers is `{"error":{"code","message","details?"}}` with its status
 * (design D20). Expected failures are SenderErrors; the body parser's own errors are
 * mapped to 4xx; a database that cannot be reached answers 503 with `Retry-After`
 * (store/unavailable.ts), and a store whose disk sync failed 503 `storage_failed`; anything else is
 * a bug and answers 500 without leaking its message.
 */
import type { z } from 'zod';
import { isSenderError, SenderError } from '../errors.js';
import { storeUnavailable } from '../store/unavailable.js';

export interface ErrorResponse {
  status: number;
  body: { error: { code: string; message: string; details?: unknown } };
  /** `Retry-After` (seconds), for a limit or a database that cannot be reached. */
  retryAfterSeconds?: number;
  /** Not the caller's doing: the server logs the error it answers. */
  logged?: true;
}

/** A zod failure on a request, as a 400 naming the field. */
export function invalidRequest(where: 'body' | 'query', error: z.ZodError): SenderError {
  const issues = error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
  const first = issues[0];
  const at = first?.path ? `${where}.${first.path}` : where;
  return new SenderError('invalid_request', `${at}: ${first?.message ?? 'invalid'}`, { details: issues });
}

/**
 * A body refused as JSON, on either path (the router's parser, or the direct one): when the text is
 * JSON all the same, a scalar (`null`, `5`, `"x"`), it says the body must be an object, which is
 * what was wrong, rather than the parser's words about an unexpected token.
 */
export function notJson(text: unknown, parserMessage: string): SenderError {
  if (typeof text === 'string') {
    try {
      const value: unknown = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
      const kind = value === null ? 'null' : typeof value === 'string' ? 'a string' : `a ${typeof value}`;
      return new SenderError('invalid_request', `the request body must be a JSON object, not ${kind}`);
    } catch {
      // not JSON at all: the parser's own words say where
    }
  }
  return new SenderError(
    'invalid_request',
    `the request body is not valid JSON: ${withoutEcho(parserMessage)}`,
  );
}

/**
 * The parser's words without the stretch of the body V8 quotes after an unexpected token
 * (`Unexpected token 'l', ..."api_key": lhk_…"... is not valid JSON`): the answer never repeats
 * what the body held, a key sent to the sign-in among it.
 */
function withoutEcho(parserMessage: string): string {
  return parserMessage.replace(/, (?:\.\.\.)?"[\s\S]*"(?:\.\.\.)? is not valid JSON$/, '');
}

/**
 * body-parser (express.json) marks its errors with a `type`, but for a body that does not
 * decompress as its `Content-Encoding` says: the decompression stream's own error (gzip, deflate
 * or br), which it gives a 4xx status and `expose` (its reading's own errors all have a type).
 */
function bodyParserError(error: unknown): SenderError | null {
  const e = error as {
    type?: unknown;
    status?: unknown;
    expose?: unknown;
    message?: unknown;
    limit?: unknown;
    body?: unknown;
  };
  if (typeof e?.status !== 'number') return null;
  if (typeof e.type !== 'string') {
    if (e.expose !== true || e.status < 400 || e.status >= 500) return null;
    return new SenderError(
      'invalid_request',
      `the request body could not be decompressed as its Content-Encoding says: ${String(e.message)}`,
    );
  }
  if (e.type === 'entity.too.large') {
    const limit = typeof e.limit === 'number' ? `${Math.round(e.limit / 1024)} KiB` : 'this route reads';
    return new SenderError('payload_too_large', `the request body is larger than ${limit}`);
  }
  if (e.type === 'entity.parse.failed') return notJson(e.body, String(e.message));
  if (e.status >= 400 && e.status < 500) {
    return new SenderError('invalid_request', `the request body could not be read: ${String(e.message)}`);
  }
  return null;
}

/**
 * The 503s a caller can act on, answered as they are: ingest switched off, a database or a full
 * service to try again, a store that can no longer make its writes durable (design D33: nothing
 * was acknowledged).
 */
const ANSWERED_503S: ReadonlySet<string> = new Set([
  'ingest_disabled',
  'store_unavailable',
  'overloaded',
  'storage_failed',
]);

export function errorResponse(error: unknown): ErrorResponse {
  const known = isSenderError(error) ? error : (bodyParserError(error) ?? storeUnavailable(error));
  if (known && (known.status < 500 || ANSWERED_503S.has(known.code))) {
    const details = known.details === undefined ? {} : { details: known.details };
    return {
      status: known.status,
      body: { error: { code: known.code, message: known.message, ...details } },
      ...(known.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: known.retryAfterSeconds }),
      // An unreachable database is logged with each request; a failed sync is not: the sender that
      // keeps it (storageFailure) logged it once.
      ...(known.code === 'store_unavailable' ? { logged: true as const } : {}),
    };
  }
  return {
    status: 500,
    body: { error: { code: 'internal', message: 'an internal error occurred; it has been logged' } },
    logged: true,
  };
}
