/**
 * The whole HTTP service `linkhooks-sender serve` runs: the management router, the dashboard at
 * /dashboard with the portal links that open it (design D54), and a health check. Exported so a
 * platform (or the reference app) can add its own routes beside them; `createServiceListener` is
 * the same service with plain ingest answered before Express (design D56), for a node:http server.
 */
import type { RequestListener } from 'node:http';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { createDashboardRouter } from './dashboard.js';
import { errorResponse } from './error-response.js';
import { frameAncestorsOf } from './origin-settings.js';
import { createPortalRouter } from './portal.js';
import { rejectMalformedUrl, securityHeaders } from './response-headers.js';
import { createManagementApi, type ManagementRouterOptions } from './router.js';
import { createSessionStore } from './sessions.js';

/**
 * @example
 * const app = createServiceApp({ sender, serviceToken: process.env.LINKHOOKS_SERVICE_TOKEN });
 * app.listen(8080, '127.0.0.1');
 */
export function createServiceApp(options: ServiceOptions): Express {
  return buildService(options).app;
}

/**
 * The service as a node:http request listener: ingest requests in plain form are answered
 * directly, the rest by the app `createServiceApp` builds.
 *
 * @example
 * createServiceServer(createServiceListener({ sender, serviceToken })).listen(8080, '127.0.0.1');
 */
export function createServiceListener(options: ServiceOptions): RequestListener {
  const { app, direct } = buildService(options);
  return (req, res) => {
    if (!direct(req, res)) app(req, res);
  };
}

export type ServiceOptions = ManagementRouterOptions & { dashboard?: boolean };

function buildService(options: ServiceOptions) {
  const app = express();
  app.disable('x-powered-by');
  // Behind the one proxy it trusts, the client's address is the last one that proxy forwarded
  // (what the sign-in limit counts); otherwise forwarded headers are ignored (design D28).
  app.set('trust proxy', options.trustProxy ? 1 : false);
  app.use(securityHeaders(options, { noStore: false }), rejectMalformedUrl);
  // 503 once published events can no longer be made durable: only a restart recovers (design D33).
  app.get('/healthz', (_req, res) => {
    const failure = options.sender.storageFailure();
    if (!failure) return void res.json({ ok: true });
    const answer = errorResponse(failure);
    res.status(answer.status).json({ ok: false, ...answer.body });
  });
  // One session store for the API and the portal links that open sessions in it.
  const sessions = options.sessions ?? createSessionStore();
  const frameAncestors = frameAncestorsOf(options.frameAncestors);
  const api = createManagementApi({ ...options, sessions });
  app.use(api.router);
  if (options.dashboard !== false) {
    app.use(createDashboardRouter({ frameAncestors }));
    app.use(
      createPortalRouter({
        sender: options.sender,
        sessions,
        trustProxy: options.trustProxy,
        frameAncestors,
        limit: api.portalLinks,
      }),
    );
  }
  // The dashboard's errors answer the API's error body, not Express's page with a stack trace.
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const answer = errorResponse(error);
    if (answer.logged) options.logger?.error({ err: error, route: req.path }, 'service error');
    res.status(answer.status).json(answer.body);
  });
  return { app, direct: api.direct };
}
