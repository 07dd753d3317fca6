/**
 * @module
 * `webhookHandler`: a Web `Request → Response` handler for Hono, Bun, Deno, Cloudflare Workers and
 * any fetch-style runtime. It is the base the Next.js App Router adapter reuses. On runtimes without
 * `node:crypto` it verifies through Web Crypto.
 */
import { createDeliveryHandler, DEFAULT_MAX_BODY_BYTES } from '../handler/handle-delivery.js';
import type { WebhookOptions } from '../handler/options.js';
import { readWebBody } from './web-body.js';

export type { DeliveryContext, WebhookHandlers, WebhookOptions } from '../handler/options.js';

/**
 * A `(request: Request) => Promise<Response>` that verifies and handles deliveries.
 *
 * @example
 * // Hono
 * const handle = webhookHandler({ secret: env.LINKHOOKS_SECRET, on: { click: (e) => save(e.data) } });
 * app.post('/webhooks', (c) => handle(c.req.raw));
 * // Bun / Deno / Workers
 * export default { fetch: handle };
 */
export function webhookHandler(options: WebhookOptions): (request: Request) => Promise<Response> {
  const handle = createDeliveryHandler(options);
  const max = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  return async (request) => {
    const response = await handle({
      method: request.method,
      header: (name) => request.headers.get(name),
      readBody: () => readWebBody(request, max),
    });
    return new Response(response.body, { status: response.status, headers: response.headers });
  };
}
