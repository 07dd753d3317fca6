/**
 * Headers every answer of the service carries, whether TLS carried the request, the client's
 * address, and the refusal of a URL whose `%` escapes do not decode (design D28). They take Node's
 * own request, so the Express router and the direct ingest path (design D56) read them alike.
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { SenderError } from '../errors.js';
import { errorResponse } from './error-response.js';

export interface TransportOptions {
  /**
   * The service runs behind a TLS proxy that sets `X-Forwarded-Proto`: `https` there means the
   * request came over TLS. Otherwise the app's own `trust proxy` setting decides (Express's
   * default: off, so a forwarded header, which any client can forge, is ignored).
   */
  trustProxy?: boolean;
  /** Send `Strict-Transport-Security` on every answer, not only those that came over TLS. */
  hsts?: boolean;
}

export const HSTS = 'max-age=31536000';

/** Whether the request reached the service, or the proxy it trusts, over TLS. */
export function cameOverTls(
  req: IncomingMessage & { secure?: boolean },
  trustProxy: boolean | undefined,
): boolean {
  if (req.secure ?? (req.socket as TLSSocket).encrypted === true) return true;
  if (!trustProxy) return false;
  const proto = req.headers['x-forwarded-proto'];
  const first = (Array.isArray(proto) ? proto[0] : proto)?.split(',')[0]?.trim().toLowerCase();
  return first === 'https';
}

/**
 * The client's address, as the sign-in limit counts it: behind the one proxy the service trusts,
 * the last address that proxy forwarded; otherwise the connection's, whatever headers say. The
 * same as Express's `req.ip` in the service's app, whose `trust proxy` is that one proxy.
 */
export function clientAddressOf(req: IncomingMessage, trustProxy: boolean | undefined): string {
  const own = req.socket.remoteAddress ?? 'unknown';
  if (!trustProxy) return own;
  const header = req.headers['x-forwarded-for'];
  const forwarded = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',');
  return (
    forwarded
      .map((a) => a.trim())
      .filter((a) => a !== '')
      .at(-1) ?? own
  );
}

/** The headers of `securityHeaders`, for a server that writes its own answers. */
export function securityHeaderList(
  options: TransportOptions,
  secure: boolean,
  { noStore }: { noStore: boolean },
): [string, string][] {
  const list: [string, string][] = [['x-content-type-options', 'nosniff']];
  if (noStore) list.push(['cache-control', 'no-store']);
  if (options.hsts || secure) list.push(['strict-transport-security', HSTS]);
  return list;
}

/**
 * `nosniff` and, over TLS, HSTS on every answer; `noStore` for answers that may carry a secret or a
 * session, which no browser or proxy cache should keep.
 */
export function securityHeaders(
  options: TransportOptions,
  { noStore }: { noStore: boolean },
): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    for (const [name, value] of securityHeaderList(options, cameOverTls(req, options.trustProxy), {
      noStore,
    }))
      res.setHeader(name, value);
    next();
  };
}

/**
 * A path with a malformed `%` escape, or a URL with a NUL character anywhere, answers 400 before any
 * route, as every bad input does (design D20).
 */
export function rejectMalformedUrl(req: Request, res: Response, next: NextFunction): void {
  const refusal = malformedUrl(req.originalUrl ?? req.url);
  if (refusal === null) {
    next();
    return;
  }
  const answer = errorResponse(new SenderError('invalid_request', refusal));
  // Answered before the routes that set it: an API answer is never kept by a cache, this one neither.
  res.setHeader('cache-control', 'no-store');
  res.status(answer.status).json(answer.body);
}

/** What is wrong with `url` as a request's, or null. */
function malformedUrl(url: string): string | null {
  try {
    decodeURIComponent(url.split('?')[0]!);
  } catch {
    return 'the URL has a malformed "%" escape';
  }
  // No id, filter or search holds one, and PostgreSQL's text cannot: a 400 here, not a 500 there.
  return /%00/i.test(url) ? 'the URL holds a NUL character (%00), which no id, filter or search can' : null;
}
