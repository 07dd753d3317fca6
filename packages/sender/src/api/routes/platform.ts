/** Event types, the OpenAPI document and Prometheus metrics. */
import { EVENT_DESCRIPTIONS, EVENT_NAMES, eventJsonSchema } from '@linkhooks/protocol';
import { z } from 'zod';
import { defineRoute } from '../route.js';
import { errorSchema, eventTypesSchema } from '../schemas.js';

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

export const metricsRoute = defineRoute({
  method: 'get',
  path: '/metrics',
  summary: 'Prometheus metrics: attempts, deliveries, durations, queue depth, disabled endpoints',
  tag: 'Platform',
  auth: 'metrics',
  responses: {
    200: { description: 'Prometheus text format', contentType: 'text/plain; version=0.0.4' },
    401: { description: 'A metrics token is configured and this is not it', schema: errorSchema },
  },
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
