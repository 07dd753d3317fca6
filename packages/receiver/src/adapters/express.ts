/**
 * @module
 * `webhookMiddleware` for Express 4 and 5. Mount it on the webhook route. It reads the raw bytes
 * itself; if `express.json()` is mounted app-wide before it, it verifies from the bytes captured
 * by {@link captureRawBody} when that hook is set, and otherwise answers at once with an error that
 * names the mount order. It never hangs and never re-serialises a parsed body.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebhookOptions } from '../handler/options.js';
import { createNodeHandler } from './node-handler.js';

export type { DeliveryContext, WebhookHandlers, WebhookOptions } from '../handler/options.js';

const MOUNT_ORDER_HINT =
  "express.json() (or another body parser) ran before webhookMiddleware and consumed the body. Mount the webhook route before app.use(express.json()), or keep the raw bytes: app.use(express.json({ verify: captureRawBody, limit: '1mb' })) with captureRawBody from '@linkhooks/receiver/express'.";

/**
 * Express middleware that verifies and handles deliveries, answering 200 / 401 / 400 / 5xx itself.
 *
 * @example
 * import express from 'express';
 * import { webhookMiddleware } from '@linkhooks/receiver/express';
 * const app = express();
 * app.post('/webhooks', webhookMiddleware({
 *   secret: process.env.LINKHOOKS_SECRET!,
 *   on: { click: async (event) => { await saveClick(event.data); } },
 * }));
 */
export function webhookMiddleware(
  options: WebhookOptions,
): (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void {
  const handle = createNodeHandler(options, MOUNT_ORDER_HINT);
  return (req, res, next) => {
    handle(req, res).catch(next);
  };
}

/**
 * A `verify` hook for `express.json()` / `express.raw()` that keeps the exact bytes on
 * `req.rawBody`, so `webhookMiddleware` can verify even after a global JSON parser.
 *
 * @example
 * app.use(express.json({ verify: captureRawBody, limit: '1mb' })); // 1 MiB, as the middleware
 * app.post('/webhooks', webhookMiddleware({ secret, on }));
 */
export function captureRawBody(req: IncomingMessage, _res: ServerResponse, buf: Buffer): void {
  (req as IncomingMessage & { rawBody?: Buffer }).rawBody = buf;
}
