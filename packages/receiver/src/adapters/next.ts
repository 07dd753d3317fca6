/**
 * @module
 * Next.js adapters. App Router: `export const POST = webhookRoute(options)` — a Web
 * `Request → Response` handler. Pages Router: `export default webhookApiRoute(options)` together
 * with `export const config = { api: { bodyParser: false } }`, so Next hands over the raw bytes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebhookOptions } from '../handler/options.js';
import { webhookHandler } from './fetch.js';
import { createNodeHandler } from './node-handler.js';

export type { DeliveryContext, WebhookHandlers, WebhookOptions } from '../handler/options.js';

/**
 * Next evaluates route modules during `next build` ("Collecting page data"), often without the
 * runtime secrets, and `next start` loads them on the first request anyway. So the Next adapters
 * check their options when the first delivery arrives, not at import; a missing secret then
 * answers 500 `invalid_secret` (and is logged) instead of breaking the build.
 */
function lazily<T>(create: () => T): () => T {
  let made: T | undefined;
  return () => {
    made ??= create();
    return made;
  };
}

/**
 * An App Router route handler.
 *
 * @example
 * // app/api/webhooks/route.ts
 * import { webhookRoute } from '@linkhooks/receiver/next';
 * export const POST = webhookRoute({ secret: process.env.LINKHOOKS_SECRET!, on: { click: save } });
 */
export function webhookRoute(options: WebhookOptions): (request: Request) => Promise<Response> {
  const handler = lazily(() => webhookHandler(options));
  return (request) => handler()(request);
}

const PAGES_HINT =
  "Next.js parsed the body before webhookApiRoute. Add `export const config = { api: { bodyParser: false } }` to this API route's file.";

/**
 * A Pages Router API route. Its file must also export `config = { api: { bodyParser: false } }`.
 *
 * @example
 * // pages/api/webhooks.ts
 * import { webhookApiRoute } from '@linkhooks/receiver/next';
 * export const config = { api: { bodyParser: false } };
 * export default webhookApiRoute({ secret: process.env.LINKHOOKS_SECRET!, on: { click: save } });
 */
export function webhookApiRoute(
  options: WebhookOptions,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const handler = lazily(() => createNodeHandler(options, PAGES_HINT));
  return (req, res) => handler()(req, res);
}
