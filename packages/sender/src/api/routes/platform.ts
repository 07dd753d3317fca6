/** Event types, the OpenAPI document, platform ingest and Prometheus metrics. */
import { EVENT_DESCRIPTIONS, EVENT_NAMES, eventJsonSchema } from '@linkhooks/protocol';
import { z } from 'zod';
import { planAllowsWebhooks } from '../../accounts.js';
import { SenderError } from '../../errors.js';
import { defineRoute } from '../route.js';
import { errorSchema, eventTypesSchema, ingestBody, publishResultSchema } from '../schemas.js';
import { publishResultJson } from '../serialize.js';

const err = (description: string) => ({ description, schema: errorSchema });

export const eventTypesRoute = defineRoute({
  method: 'get',
  path: '/v1/event-types',
  summary: 'The six event types with the JSON Schema of each delivery',
  tag: 'Event types',
  auth: 'account',
  responses: { 200: { description: 'The catalogue', schema: eventTypesSchema } },
  async handle() {
    const data = EVENT_NAMES.map((name) => ({
      name,
      description: EVENT_DESCRIPTIONS[name],
      schema: eventJsonSchema(name),
    }));
    return { status: 200, json: { data } };
  },
});

export const ingestRoute = defineRoute<z.infer<typeof ingestBody>>({
  method: 'post',
  path: '/internal/v1/events',
  summary: 'Platform ingest: publish an event for an account (the same as publish())',
  tag: 'Platform',
  auth: 'service',
  body: { schema: ingestBody, required: true },
  responses: {
    202: { description: 'Stored, with one delivery per subscribed endpoint', schema: publishResultSchema },
    400: err('The event is invalid'),
    401: err('Missing or wrong service token'),
    403: err('The account’s plan has no webhooks'),
    404: err('No such account'),
    503: err('No service token is configured'),
  },
  async handle({ sender, body }) {
    const account = await sender.getAccount(body.account_id);
    if (!account) throw new SenderError('not_found', `no account ${body.account_id}`);
    if (!planAllowsWebhooks(account.plan)) {
      throw new SenderError('plan_required', `account ${account.id} is on the ${account.plan} plan`);
    }
    const result = await sender.publish(account.id, {
      event: body.event,
      data: body.data,
      ...(body.timestamp !== undefined ? { timestamp: body.timestamp } : {}),
    });
    return { status: 202, json: publishResultJson(result) };
  },
});

export const metricsRoute = defineRoute({
  method: 'get',
  path: '/metrics',
  summary: 'Prometheus metrics: attempts, deliveries, durations, queue depth, disabled endpoints',
  tag: 'Platform',
  auth: 'none',
  responses: { 200: { description: 'Prometheus text format', contentType: 'text/plain; version=0.0.4' } },
  async handle({ sender }) {
    return { status: 200, text: await sender.metrics.metrics(), contentType: sender.metrics.contentType };
  },
});

/** Described here, answered by the router (the document is built from the route table). */
export const openApiRouteSpec = {
  method: 'get' as const,
  path: '/v1/openapi.json',
  summary: 'This document',
  tag: 'Platform' as const,
  auth: 'none' as const,
  responses: { 200: { description: 'OpenAPI 3.1', schema: z.record(z.string(), z.unknown()) } },
};
