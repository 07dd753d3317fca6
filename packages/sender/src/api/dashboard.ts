/**
 * The customer-facing dashboard, served by the service at /dashboard (design D22). Its files
 * are built with the package (dist/dashboard); the page loads one script and one stylesheet from
 * this origin under a strict Content-Security-Policy, and signs in through POST /v1/session.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
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

/** The views' addresses (dashboard/src/routes.ts): each answers the page, which shows the view. */
const VIEW_PATHS = ['/dashboard/log', '/dashboard/deliveries/:id', '/dashboard/endpoints/:id'];
const CHUNK = /^chunk-[A-Z0-9]+\.js$/;

/** `frameAncestors`: origins checked by frameAncestorsOf (origin-settings.ts). */
export function createDashboardRouter(options: { frameAncestors?: readonly string[] } = {}): Router {
  const SECURITY_HEADERS = {
    'content-security-policy': `default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; ${frameAncestorsDirective(options.frameAncestors ?? [])}; base-uri 'none'; form-action 'self'`,
    'referrer-policy': 'no-referrer',
  };
  const router = express.Router();
  const dir = dashboardDir();
  const files: Record<string, { type: string; body: Buffer }> | null = dir
    ? {
        '/dashboard': { type: 'html', body: readFileSync(`${dir}index.html`) },
        '/dashboard/app.js': { type: 'text/javascript', body: readFileSync(`${dir}app.js`) },
        '/dashboard/style.css': { type: 'text/css', body: readFileSync(`${dir}style.css`) },
        // The script's chunks, loaded by the page that needs them (the charts' library).
        ...Object.fromEntries(
          readdirSync(dir)
            .filter((name) => CHUNK.test(name))
            .map((name) => [
              `/dashboard/${name}`,
              { type: 'text/javascript', body: readFileSync(`${dir}${name}`) },
            ]),
        ),
      }
    : null;
  router.get('/', (_req, res) => res.redirect(302, '/dashboard'));
  const send = (path: string, res: express.Response) => {
    if (!files) {
      throw new SenderError(
        'route_not_found',
        'the dashboard is not built: run pnpm build in @linkhooks/sender',
      );
    }
    const file = files[path] ?? files['/dashboard']!;
    res.set(SECURITY_HEADERS).type(file.type).send(file.body);
  };
  // The page answers every view's address (design D48): /dashboard/log, /dashboard/deliveries/…,
  // /dashboard/endpoints/…, so a reload or a shared link opens the view it names.
  router.get(
    ['/dashboard', '/dashboard/', '/dashboard/app.js', '/dashboard/style.css', ...VIEW_PATHS],
    (req, res) => send(req.path, res),
  );
  router.get('/dashboard/:chunk', (req, res, next) => (files?.[req.path] ? send(req.path, res) : next()));
  return router;
}
