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
 * An App Router route handler.
 *
 * @example
 * // app/api/webhooks/route.ts
 * import { webhookRoute } from '@linkhooks/receiver/next';
 * export const POST = webhookRoute({ secret: process.env.LINKHOOKS_SECRET!, on: { click: save } });
 */
export function webhookRoute(options: WebhookOptions): (request: Request) => Promise<Response> {
  return webhookHandler(options);
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
  return createNodeHandler(options, PAGES_HINT);
}
