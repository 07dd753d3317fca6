/**
 * What a `worker` answers when given a port: `GET /healthz` and `GET /metrics` alone. Attempts and
 * deliveries are counted by the process that makes them, so each worker's counters must be scraped
 * from the worker itself, and a supervisor checks it like `serve`; the management API and ingest
 * stay with `serve`. Answers as `serve` does: JSON errors with stable codes, `nosniff`, the metrics
 * token when one is set (constant-time, as everywhere).
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { tokenMatcher } from '../accounts.js';
import { systemClock } from '../clock.js';
import type { Sender } from '../engine/sender.js';
import { SenderError } from '../errors.js';
import { clientKey } from '../limits/client-key.js';
import { createLimiter } from '../limits/limiter.js';
import { rateLimited } from '../limits/rate-limited.js';
import { perMinute } from '../limits/token-bucket.js';
import { checkMetricsToken } from './auth.js';
import { errorResponse } from './error-response.js';
import { securityHeaderList } from './response-headers.js';

export interface WorkerListenerOptions {
  sender: Pick<Sender, 'metrics'>;
  /** When set, `GET /metrics` needs it as a Bearer token; open otherwise. */
  metricsToken?: string;
  /** Wrong metrics tokens an address may send a minute before it is answered 429 (default 10, as `serve`). */
  signInFailuresPerMinute?: number;
  onError?: (error: unknown) => void;
}

/** serve's headers for a plain-HTTP answer (`nosniff`); a worker has no TLS or proxy settings. */
const HEADERS = securityHeaderList({}, false, { noStore: false });

export function createWorkerListener(options: WorkerListenerOptions): RequestListener {
  const metricsToken = options.metricsToken ? tokenMatcher(options.metricsToken) : undefined;
  // As serve's (design D26): a token guessed here is as good as one guessed there. The worker's
  // port is its own address's, with no proxy before it to trust.
  const failures = createLimiter(perMinute(options.signInFailuresPerMinute ?? 10), systemClock);
  const checkToken = (req: IncomingMessage) => {
    if (!metricsToken) return;
    const key = clientKey(req.socket.remoteAddress ?? 'unknown');
    const allowed = failures.peek(key);
    if (!allowed.ok) throw rateLimited('failed sign-ins from this address', allowed.retryAfterMs);
    try {
      checkMetricsToken(metricsToken, req.headers.authorization);
    } catch (error) {
      failures.take(key);
      throw error;
    }
  };
  const answer = async (req: IncomingMessage): Promise<{ type: string; body: string }> => {
    const path = (req.url ?? '/').split('?', 1)[0];
    const read = req.method === 'GET' || req.method === 'HEAD';
    if (read && path === '/healthz') return { type: 'application/json', body: '{"ok":true}' };
    if (read && path === '/metrics') {
      checkToken(req);
      const { metrics } = options.sender;
      return { type: metrics.contentType, body: await metrics.metrics() };
    }
    throw new SenderError(
      'route_not_found',
      `${req.method} ${path}: a worker answers GET /healthz and GET /metrics only; the API is served by linkhooks-sender serve`,
    );
  };
  return (req: IncomingMessage, res: ServerResponse) => {
    for (const [name, value] of HEADERS) res.setHeader(name, value);
    answer(req).then(
      ({ type, body }) => {
        res.writeHead(200, { 'content-type': type });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      (error: unknown) => {
        const { status, body, logged, retryAfterSeconds } = errorResponse(error);
        if (logged) options.onError?.(error);
        res.writeHead(status, {
          'content-type': 'application/json',
          ...(retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) }),
        });
        res.end(JSON.stringify(body));
      },
    );
    req.resume(); // a body sent anyway is read and dropped
  };
}
