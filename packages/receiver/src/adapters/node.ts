/**
 * @module
 * `webhookListener` for Node's `http` / `https` servers: a `(req, res)` request listener.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebhookOptions } from '../handler/options.js';
import { createNodeHandler } from './node-handler.js';

export type { DeliveryContext, WebhookHandlers, WebhookOptions } from '../handler/options.js';

/**
 * A Node `http` request listener that verifies and handles deliveries.
 *
 * @example
 * import { createServer } from 'node:http';
 * import { webhookListener } from '@linkhooks/receiver/node';
 * createServer(webhookListener({ secret: process.env.LINKHOOKS_SECRET!, on: { click: (e) => save(e.data) } })).listen(3000);
 */
export function webhookListener(
  options: WebhookOptions,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return createNodeHandler(
    options,
    'Something read the request stream before webhookListener; hand it the untouched request.',
  );
}
