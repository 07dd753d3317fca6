/**
 * What a `worker` answers when given a port: `GET /healthz` and `GET /metrics` alone. Attempts and
 * deliveries are counted by the process that makes them, so each worker's counters must be scraped
 * from the worker itself, and a supervisor checks it like `serve`; the management API and ingest
 * stay with `serve`. Answers as `serve` does: JSON errors with stable codes, `nosniff`, the metrics
 * token when one is set (constant-time, as everywhere).
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { tokenMatcher } from '../accounts.js';
import type { Sender } from '../engine/sender.js';
import { SenderError } from '../errors.js';
import { checkMetricsToken } from './auth.js';
import { errorResponse } from './error-response.js';
import { securityHeaderList } from './response-headers.js';

export interface WorkerListenerOptions {
  sender: Pick<Sender, 'metrics'>;
  /** When set, `GET /metrics` needs it as a Bearer token; open otherwise. */
  metricsToken?: string;
  onError?: (error: unknown) => void;
}

/** serve's headers for a plain-HTTP answer (`nosniff`); a worker has no TLS or proxy settings. */
const HEADERS = securityHeaderList({}, false, { noStore: false });

export function createWorkerListener(options: WorkerListenerOptions): RequestListener {
  const metricsToken = options.metricsToken ? tokenMatcher(options.metricsToken) : undefined;
  const answer = async (req: IncomingMessage): Promise<{ type: string; body: string }> => {
    const path = (req.url ?? '/').split('?', 1)[0];
    const read = req.method === 'GET' || req.method === 'HEAD';
    if (read && path === '/healthz') return { type: 'application/json', body: '{"ok":true}' };
    if (read && path === '/metrics') {
      checkMetricsToken(metricsToken, req.headers.authorization);
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
        const { status, body, logged } = errorResponse(error);
        if (logged) options.onError?.(error);
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      },
    );
    req.resume(); // a body sent anyway is read and dropped
  };
}
