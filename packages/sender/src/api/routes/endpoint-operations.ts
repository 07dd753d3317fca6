/** Endpoint operations: pause, resume (design D34) and recover failed deliveries (design D35). */
import type { z } from 'zod';
import { RECOVER_BATCH } from '../../engine/endpoint-operations.js';
import { ANSWER_WITHIN_MS } from '../../engine/steps-under-way.js';
import { defineRoute } from '../route.js';
import { endpointSchema, errorSchema, recoverBody, recoverResultSchema } from '../schemas.js';
import { endpointJson } from '../serialize.js';

const err = (description: string) => ({ description, schema: errorSchema });
const notFound = err('No such endpoint in this account');

export const endpointOperationRoutes = [
  defineRoute({
    method: 'post',
    path: '/v1/endpoints/:id/pause',
    summary: 'Pause: deliveries wait, unattempted and uncounted, new events included, until resumed',
    tag: 'Endpoints',
    auth: 'account',
    responses: {
      200: {
        description:
          'Paused at once (pausing again changes nothing); its waiting deliveries are held in steps after the answer',
        schema: endpointSchema,
      },
      404: notFound,
    },
    async handle({ sender, account, params }) {
      return { status: 200, json: endpointJson(await sender.pauseEndpoint(account.id, params.id!)) };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/endpoints/:id/resume',
    summary: 'Resume a paused endpoint: what waited is delivered, the due ones at once',
    tag: 'Endpoints',
    auth: 'account',
    responses: {
      200: {
        description: `Resumed: answered once every held delivery is claimable again, or after ${ANSWER_WITHIN_MS / 1000} s with the rest going on`,
        schema: endpointSchema,
      },
      404: notFound,
    },
    async handle({ sender, account, params }) {
      const { endpoint } = await sender.resumeEndpoint(account.id, params.id!);
      return { status: 200, json: endpointJson(endpoint) };
    },
  }),
  defineRoute<z.infer<typeof recoverBody>>({
    method: 'post',
    path: '/v1/endpoints/:id/recover',
    summary: `Give failed deliveries created in [since, until) one more attempt each, up to ${RECOVER_BATCH} per call`,
    tag: 'Endpoints',
    auth: 'account',
    body: { schema: recoverBody, required: true },
    responses: {
      200: { description: 'How many were re-queued, and how many remain', schema: recoverResultSchema },
      400: err(
        'since or until is missing or malformed, since is in the future, or since is not before until',
      ),
      404: notFound,
      409: err('The endpoint is disabled or paused'),
      429: err('Too many recoveries this minute; Retry-After says when to call again'),
    },
    async handle({ sender, account, params, body }) {
      const result = await sender.recoverEndpoint(account.id, params.id!, {
        since: body.since,
        ...(body.until !== undefined ? { until: body.until } : {}),
      });
      return { status: 200, json: result };
    },
  }),
];
