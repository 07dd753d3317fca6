/**
 * @module
 * Next.js adapters. App Router: `export const POST = webhookRoute(options)` — a Web
 * `Request → Response` handler. Pages Router: `export default webhookApiRoute(options)` together
 * with `export const config = { api: { bodyParser: false } }`, so Next hands over the raw bytes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isWebhookError } from '../errors.js';
import { refusedOptions } from '../handler/handle-delivery.js';
import type { WebhookOptions, WebhookResponse } from '../handler/options.js';
import { webhookHandler } from './fetch.js';
import { createNodeHandler, writeNodeResponse } from './node-handler.js';

export type { DeliveryContext, WebhookHandlers, WebhookOptions } from '../handler/options.js';

/**
 * Next evaluates route modules during `next build` ("Collecting page data"), often without the
 * runtime secrets, and `next start` loads them on the first request anyway. So the Next adapters
 * check their options when the first delivery arrives, not at import: a missing secret then
 * answers each delivery 500 `invalid_secret` and tells `onError` (or logs it) instead of breaking
 * the build. An option that is a mistake in the code (a misspelt handler name) throws, as at
 * import in the other adapters.
 */
function lazily<H>(
  options: WebhookOptions,
  create: () => H,
  refused: (answer: WebhookResponse) => H,
): () => H {
  let made: H | undefined;
  return () => {
    if (made) return made;
    try {
      made = create();
      return made;
    } catch (error) {
      if (!isWebhookError(error)) throw error;
      return refused(refusedOptions(error, options));
    }
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
  const handler = lazily(
    options,
    () => webhookHandler(options),
    (answer) => async () => new Response(answer.body, { status: answer.status, headers: answer.headers }),
  );
  return async (request) => handler()(request);
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
  const handler = lazily(
    options,
    () => createNodeHandler(options, PAGES_HINT),
    (answer) => async (_req, res) => writeNodeResponse(res, answer),
  );
  return async (req, res) => handler()(req, res);
}
