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

/** Who may frame a page of the service: nobody, unless origins are allowed (design D55). */
export function frameAncestorsDirective(origins: readonly string[]): string {
  return origins.length === 0 ? "frame-ancestors 'none'" : `frame-ancestors 'self' ${origins.join(' ')}`;
}

/** `frameAncestors`: origins checked by frameAncestorsOf (origin-settings.ts). */
export function createDashboardRouter(options: { frameAncestors?: readonly string[] } = {}): Router {
  const SECURITY_HEADERS = {
    'content-security-policy': `default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; ${frameAncestorsDirective(options.frameAncestors ?? [])}; base-uri 'none'; form-action 'self'`,
    'referrer-policy': 'no-referrer',
  };
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
  router.get(['/dashboard', '/dashboard/', '/dashboard/app.js', '/dashboard/style.css'], (req, res) => {
    if (!files) {
      throw new SenderError(
        'route_not_found',
        'the dashboard is not built: run pnpm build in @linkhooks/sender',
      );
    }
    const file = files[req.path.replace(/\/$/, '') as keyof typeof files];
    res.set(SECURITY_HEADERS).type(file.type).send(file.body);
  });
  return router;
}
