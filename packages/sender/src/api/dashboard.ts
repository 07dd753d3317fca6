/**
 * The customer-facing dashboard, served by the service at /dashboard (design D22). Its files
 * are built with the package (dist/dashboard); the page loads one script and one stylesheet from
 * this origin under a strict Content-Security-Policy, and signs in through POST /v1/session.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import express, { type Router } from 'express';
import { SenderError } from '../errors.js';

/** dist/dashboard beside the built entry, or the package's dist when running from source. */
function dashboardDir(): string | null {
  for (const candidate of ['./dashboard/', '../../dist/dashboard/']) {
    const dir = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(`${dir}index.html`)) return dir;
  }
  return null;
}

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'referrer-policy': 'no-referrer',
};

/** The views' addresses (dashboard/src/routes.ts): each answers the page, which shows the view. */
const VIEW_PATHS = ['/dashboard/log', '/dashboard/deliveries/:id', '/dashboard/endpoints/:id'];

export function createDashboardRouter(): Router {
  const router = express.Router();
  const dir = dashboardDir();
  const files = dir
    ? {
        '/dashboard': { type: 'html', body: readFileSync(`${dir}index.html`) },
        '/dashboard/app.js': { type: 'text/javascript', body: readFileSync(`${dir}app.js`) },
        '/dashboard/style.css': { type: 'text/css', body: readFileSync(`${dir}style.css`) },
      }
    : null;
  router.get('/', (_req, res) => res.redirect(302, '/dashboard'));
  // The page answers every view's address (design D48): /dashboard/log, /dashboard/deliveries/…,
  // /dashboard/endpoints/…, so a reload or a shared link opens the view it names.
  router.get(
    ['/dashboard', '/dashboard/', '/dashboard/app.js', '/dashboard/style.css', ...VIEW_PATHS],
    (req, res) => {
      if (!files) {
        throw new SenderError(
          'route_not_found',
          'the dashboard is not built: run pnpm build in @linkhooks/sender',
        );
      }
      const file = files[req.path as keyof typeof files] ?? files['/dashboard'];
      res.set(SECURITY_HEADERS).type(file.type).send(file.body);
    },
  );
  return router;
}
