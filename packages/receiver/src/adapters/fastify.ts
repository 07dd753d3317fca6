/**
 * @module
 * `webhookPlugin` for Fastify 4 and 5. Register it with `{path, secret, on}`. Inside its own
 * encapsulated scope it swaps the body parsers for one that keeps the raw bytes, so the rest of the
 * app keeps parsing JSON as usual.
 */
import type { FastifyPluginCallback } from 'fastify';
import { unreadableBody, WebhookError } from '../errors.js';
import { createDeliveryHandler, DEFAULT_MAX_BODY_BYTES } from '../handler/handle-delivery.js';
import type { WebhookOptions } from '../handler/options.js';

export type { DeliveryContext, WebhookHandlers, WebhookOptions } from '../handler/options.js';

export interface WebhookPluginOptions extends WebhookOptions {
  /** The route deliveries are POSTed to, e.g. `/webhooks/linkhooks`. */
  path: string;
}

/**
 * A Fastify plugin that adds a POST route verifying and handling deliveries.
 *
 * @example
 * import Fastify from 'fastify';
 * import { webhookPlugin } from '@linkhooks/receiver/fastify';
 * const app = Fastify();
 * await app.register(webhookPlugin, { path: '/webhooks', secret: process.env.LINKHOOKS_SECRET!, on: { click: save } });
 */
export const webhookPlugin: FastifyPluginCallback<WebhookPluginOptions> = (instance, options, done) => {
  if (typeof options.path !== 'string' || !options.path.startsWith('/')) {
    done(new TypeError('webhookPlugin: `path` must be a route path such as "/webhooks"'));
    return;
  }
  const handle = createDeliveryHandler(options);
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;

  // Encapsulated: only this plugin's routes lose the JSON parser.
  instance.removeAllContentTypeParsers();
  // The bytes are read whatever the Content-Type says, as in the other adapters: Fastify answers a
  // header that is not a media type (empty, `;;`) with 415 before any parser runs, so it goes.
  instance.addHook('onRequest', (request, _reply, next) => {
    delete request.headers['content-type'];
    next();
  });
  instance.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: maxBodyBytes }, (_req, body, next) => {
    next(null, body);
  });
  // A body Fastify refused goes through the shared handler as the body it could not read, so that
  // `onError` is told of it and it is answered as in the other adapters. Any other error (an app's
  // hook in this scope) goes on to the app's own handler.
  instance.setErrorHandler(async (error: { statusCode?: number; code?: string }, request, reply) => {
    if (!error.code?.startsWith('FST_ERR_CTP_')) throw error;
    const e =
      error.statusCode === 413
        ? new WebhookError('payload_too_large', `The body is larger than ${maxBodyBytes} bytes.`)
        : unreadableBody(error);
    const response = await handle({
      method: request.method,
      header: (name) => request.headers[name],
      readBody: () => Promise.reject(e),
    });
    return reply.code(response.status).headers(response.headers).send(response.body);
  });

  // Every method reaches the shared handler, which answers 405 to anything but POST.
  instance.route({
    method: ['DELETE', 'GET', 'PATCH', 'POST', 'PUT'],
    url: options.path,
    handler: async (request, reply) => {
      const body = request.body;
      const response = await handle({
        method: request.method,
        header: (name) => request.headers[name],
        readBody: async () => {
          if (body instanceof Uint8Array || typeof body === 'string') return body;
          if (body === undefined || body === null) return new Uint8Array(0);
          // Replaced by an app's hook (a preValidation that parses): the signed bytes are gone.
          throw new WebhookError(
            'body_already_parsed',
            'An app hook replaced the request body before the webhook handler.',
            {
              hint: 'Leave request.body alone in hooks that run for the webhook route (onRequest, preParsing, preValidation, preHandler).',
            },
          );
        },
      });
      return reply.code(response.status).headers(response.headers).send(response.body);
    },
  });
  done();
};
