/** Endpoint routes: CRUD, the secret, re-enabling and the test event (design D19). */
import type { z } from 'zod';
import { ANSWER_WITHIN_MS } from '../../engine/steps-under-way.js';
import { defineRoute } from '../route.js';
import {
  enableBody,
  enableResultSchema,
  endpointCreateBody,
  endpointListSchema,
  endpointSchema,
  endpointUpdateBody,
  endpointWithSecretSchema,
  errorSchema,
  publishResultSchema,
  rotateBody,
  secretSchema,
  testBody,
} from '../schemas.js';
import {
  enableResultJson,
  endpointJson,
  endpointWithSecretJson,
  publishResultJson,
  secretJson,
} from '../serialize.js';

const err = (description: string) => ({ description, schema: errorSchema });
const notFound = err('No such endpoint in this account');
/** The API's snake_case body → the engine's input. */
const endpointInput = <T extends { standard_webhooks?: boolean | undefined }>(body: T) => {
  const { standard_webhooks, ...rest } = body;
  return { ...rest, ...(standard_webhooks !== undefined ? { standardWebhooks: standard_webhooks } : {}) };
};
const badRequest = err('Invalid input; the message says what is wrong');

export const endpointRoutes = [
  defineRoute<z.infer<typeof endpointCreateBody>>({
    method: 'post',
    path: '/v1/endpoints',
    summary: 'Create an endpoint; the response shows its generated secret',
    tag: 'Endpoints',
    auth: 'account',
    body: { schema: endpointCreateBody, required: true },
    responses: {
      201: { description: 'Created', schema: endpointWithSecretSchema },
      400: badRequest,
      429: err(
        'The account has as many endpoints as it may have (`quota_exceeded`): delete one to add another',
      ),
    },
    async handle({ sender, account, body }) {
      const endpoint = await sender.createEndpoint(account.id, endpointInput(body));
      return { status: 201, json: endpointWithSecretJson(endpoint) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/endpoints',
    summary: 'List the account’s endpoints',
    tag: 'Endpoints',
    auth: 'account',
    responses: { 200: { description: 'The endpoints, oldest first', schema: endpointListSchema } },
    async handle({ sender, account }) {
      const endpoints = await sender.listEndpoints(account.id);
      return { status: 200, json: { data: endpoints.map(endpointJson) } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/endpoints/:id',
    summary: 'Get an endpoint with its status and failure count',
    tag: 'Endpoints',
    auth: 'account',
    responses: { 200: { description: 'The endpoint', schema: endpointSchema }, 404: notFound },
    async handle({ sender, account, params }) {
      return { status: 200, json: endpointJson(await sender.getEndpoint(account.id, params.id!)) };
    },
  }),
  defineRoute<z.infer<typeof endpointUpdateBody>>({
    method: 'patch',
    path: '/v1/endpoints/:id',
    summary:
      'Change an endpoint’s URL, events (for events published from then on), description or Standard Webhooks switch',
    tag: 'Endpoints',
    auth: 'account',
    body: { schema: endpointUpdateBody, required: true },
    responses: {
      200: { description: 'The updated endpoint', schema: endpointSchema },
      400: err(
        'Invalid input; the message says what is wrong. secret_rotation_required: standard_webhooks needs a secret of today’s form, rotate it first',
      ),
      404: notFound,
    },
    async handle({ sender, account, params, body }) {
      const endpoint = await sender.updateEndpoint(account.id, params.id!, endpointInput(body));
      return { status: 200, json: endpointJson(endpoint) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/endpoints/:id',
    summary: `Delete an endpoint with its deliveries and their log: it stops at once, then its deliveries go in bounded steps; answered once all are gone, or after ${ANSWER_WITHIN_MS / 1000} s with the rest going on`,
    tag: 'Endpoints',
    auth: 'account',
    responses: { 204: { description: 'Deleted' }, 404: notFound },
    async handle({ sender, account, params }) {
      await sender.deleteEndpoint(account.id, params.id!);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/endpoints/:id/secret',
    summary: 'Show the endpoint’s signing secret',
    tag: 'Endpoints',
    auth: 'account',
    responses: { 200: { description: 'The secret', schema: secretSchema }, 404: notFound },
    async handle({ sender, account, params }) {
      const endpoint = await sender.getEndpoint(account.id, params.id!);
      return { status: 200, json: secretJson(endpoint) };
    },
  }),
  defineRoute<z.infer<typeof rotateBody>>({
    method: 'post',
    path: '/v1/endpoints/:id/secret/rotate',
    summary:
      'Replace the signing secret; the old one keeps signing X-Service-Signature for the grace period (default 24 hours), then the new one does',
    tag: 'Endpoints',
    auth: 'account',
    body: { schema: rotateBody, required: false },
    responses: {
      200: { description: 'The new secret, and when the old one stops signing', schema: secretSchema },
      400: badRequest,
      404: notFound,
    },
    async handle({ sender, account, params, body }) {
      const endpoint = await sender.rotateSecret(account.id, params.id!, {
        ...(body.grace_period_seconds !== undefined ? { gracePeriodSeconds: body.grace_period_seconds } : {}),
      });
      return { status: 200, json: secretJson(endpoint) };
    },
  }),
  defineRoute<z.infer<typeof enableBody>>({
    method: 'post',
    path: '/v1/endpoints/:id/enable',
    summary: 'Re-enable: failure count reset, held deliveries resumed, skipped ones replayed if asked',
    tag: 'Endpoints',
    auth: 'account',
    body: { schema: enableBody, required: false },
    responses: {
      200: {
        description: `Enabled: answered once its held and replayed deliveries are moved, or after ${ANSWER_WITHIN_MS / 1000} s with the rest going on; the counts are those moved by the answer`,
        schema: enableResultSchema,
      },
      400: badRequest,
      404: notFound,
    },
    async handle({ sender, account, params, body }) {
      const result = await sender.reenableEndpoint(account.id, params.id!, {
        replaySkipped: body.replay_skipped ?? false,
      });
      return { status: 200, json: enableResultJson(result) };
    },
  }),
  defineRoute<z.infer<typeof testBody>>({
    method: 'post',
    path: '/v1/endpoints/:id/test',
    summary:
      'Send a signed sample event of a subscribed type, marked X-Service-Test: 1 and logged like any delivery (test: true)',
    tag: 'Endpoints',
    auth: 'account',
    body: { schema: testBody, required: false },
    responses: {
      202: { description: 'Queued for delivery', schema: publishResultSchema },
      400: badRequest,
      404: notFound,
      409: err('The endpoint is disabled (`endpoint_disabled`) or paused (`endpoint_paused`)'),
      429: err('Too many test events this minute; Retry-After says when to send again'),
      503: err(
        'The service could not make the test event durable on its disk (`storage_failed`): send it again once the service has been restarted',
      ),
    },
    async handle({ sender, account, params, body }) {
      const result = await sender.sendTestEvent(account.id, params.id!, body.event);
      return { status: 202, json: publishResultJson(result) };
    },
  }),
];
