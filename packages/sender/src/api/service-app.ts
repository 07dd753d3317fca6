/**
 * The whole HTTP service `linkhooks-sender serve` runs: the management router, the dashboard at
 * /dashboard, and a health check. Exported so a platform (or the reference app) can add its own routes beside them.
 */
import express, { type Express } from 'express';
import { createDashboardRouter } from './dashboard.js';
import { createManagementRouter, type ManagementRouterOptions } from './router.js';

/**
 * @example
 * const app = createServiceApp({ sender, serviceToken: process.env.LINKHOOKS_SERVICE_TOKEN });
 * app.listen(8080, '127.0.0.1');
 */
export function createServiceApp(options: ManagementRouterOptions & { dashboard?: boolean }): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  app.get('/healthz', (_req, res) => {
    res.json({ ok: true });
  });
  app.use(createManagementRouter(options));
  if (options.dashboard !== false) app.use(createDashboardRouter());
  return app;
}
