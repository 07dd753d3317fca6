/**
 * Headers every answer of the service carries, whether TLS carried the request, and the refusal of
 * a URL whose `%` escapes do not decode (design D28).
 */
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
export function cameOverTls(req: Request, trustProxy: boolean | undefined): boolean {
  if (req.secure) return true;
  if (!trustProxy) return false;
  const proto = req.headers['x-forwarded-proto'];
  const first = (Array.isArray(proto) ? proto[0] : proto)?.split(',')[0]?.trim().toLowerCase();
  return first === 'https';
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
    res.setHeader('x-content-type-options', 'nosniff');
    if (noStore) res.setHeader('cache-control', 'no-store');
    if (options.hsts || cameOverTls(req, options.trustProxy))
      res.setHeader('strict-transport-security', HSTS);
    next();
  };
}

/** A path with a malformed `%` escape answers 400 before any route, as every bad input does (design D20). */
export function rejectMalformedUrl(req: Request, res: Response, next: NextFunction): void {
  const path = (req.originalUrl ?? req.url).split('?')[0]!;
  try {
    decodeURIComponent(path);
  } catch {
    const answer = errorResponse(new SenderError('invalid_request', 'the URL has a malformed "%" escape'));
    res.status(answer.status).json(answer.body);
    return;
  }
  next();
}
