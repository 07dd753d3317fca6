/**
 * Opening a portal link (design D54): `GET /portal?token=…` takes the link once, signs its account
 * into a dashboard session (the same cookie as a sign-in, design D22) and redirects to /dashboard,
 * so the token leaves the address bar at once. A link that cannot sign in answers a short page in
 * plain words that sends the user back to the platform's app for a new one.
 */
import express, { type Request, type Response, type Router } from 'express';
import { planAllowsWebhooks } from '../accounts.js';
import type { PortalRefusal, Sender } from '../engine/sender.js';
import { frameAncestorsDirective } from './dashboard.js';
import { cameOverTls, clientAddressOf } from './response-headers.js';
import { type SessionStore, sessionCookie, sessionIdOf } from './sessions.js';

export const PORTAL_PATH = '/portal';

/** The link the platform sends its user to. */
export function portalLink(baseUrl: string, token: string): string {
  return `${baseUrl}${PORTAL_PATH}?token=${encodeURIComponent(token)}`;
}

const WHY: Record<PortalRefusal | 'plan' | 'limited', string> = {
  not_valid: 'This sign-in link has already been used, or it is not a valid link.',
  expired: 'This sign-in link has expired.',
  account_gone: 'The account this link was made for no longer exists.',
  plan: 'Webhooks are not part of this account’s plan.',
  limited: 'Too many links that could not sign in came from your network just now. Wait a minute.',
};

/** The failed sign-ins portal links count against (createRouteRunner's `portalLinks`). */
export interface PortalLinkLimit {
  /** Seconds until links from `client` are looked up again, or 0. */
  wait(client: string): number;
  failed(client: string): void;
}

function refusalPage(why: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Link expired — webhooks dashboard</title></head>
<body>
<main>
<h1>This link cannot sign you in</h1>
<p>${why}</p>
<p>Each link to the webhooks dashboard works once, for a few minutes. Go back to the app you came from and open the webhooks dashboard from there again: it gives you a new link.</p>
</main>
</body>
</html>
`;
}

export interface PortalRouterOptions {
  sender: Sender;
  sessions: SessionStore;
  trustProxy?: boolean;
  /** Checked origins that may frame the dashboard (design D55); the link may open in their frame. */
  frameAncestors: readonly string[];
  limit: PortalLinkLimit;
}

export function createPortalRouter(options: PortalRouterOptions): Router {
  const { sender, sessions, frameAncestors } = options;
  const headers = {
    // The link is a credential until used: no cache keeps the answer, no referrer carries it on.
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'content-security-policy': `default-src 'none'; ${frameAncestorsDirective(frameAncestors)}; base-uri 'none'; form-action 'none'`,
  };
  const router = express.Router();
  router.get(PORTAL_PATH, async (req: Request, res: Response) => {
    res.set(headers);
    const client = clientAddressOf(req, options.trustProxy);
    const wait = options.limit.wait(client);
    if (wait > 0) {
      res.status(429).set('retry-after', String(wait)).type('html').send(refusalPage(WHY.limited));
      return;
    }
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    const opened = await sender.openPortalSession(token);
    if (!opened.ok) options.limit.failed(client);
    const refusal = !opened.ok ? opened.reason : planAllowsWebhooks(opened.account.plan) ? null : 'plan';
    if (!opened.ok || refusal) {
      res
        .status(refusal === 'plan' ? 403 : 401)
        .type('html')
        .send(refusalPage(WHY[refusal!]));
      return;
    }
    const previous = sessionIdOf(req.headers.cookie);
    if (previous) sessions.delete(previous);
    const session = sessions.create(opened.account.id);
    const cookies = { secure: cameOverTls(req, options.trustProxy), embeddable: frameAncestors.length > 0 };
    res.setHeader('set-cookie', sessionCookie(session.id, session.maxAgeSeconds, cookies));
    res.redirect(303, '/dashboard');
  });
  return router;
}
