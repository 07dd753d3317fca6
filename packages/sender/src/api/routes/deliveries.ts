/** The delivery log (design D16): pages with filters, one delivery with its attempts, retry now. */
import { z } from 'zod';
import { READS_PER_ACCOUNT } from '../../limits/read-turns.js';
import type { DeliveryFilter } from '../../store/port.js';
import { defineRoute } from '../route.js';
import {
  deliveriesQuery,
  deliveryDetailSchema,
  deliveryPageSchema,
  deliverySchema,
  errorSchema,
} from '../schemas.js';
import { deliveryDetailJson, deliveryJson } from '../serialize.js';

const DEFAULT_LIMIT = 20;
const err = (description: string) => ({ description, schema: errorSchema });
/** A search (`q`) is answered in the account's turn among the log's searches (design D82). */
const searchesRefused = `With q: the account already has ${READS_PER_ACCOUNT} searches being answered or waiting (\`rate_limited\`); Retry-After says when to ask again`;

type LogQuery = z.infer<typeof deliveriesQuery>;
const allDeliveriesQuery = deliveriesQuery.extend({
  endpoint_id: z.string().min(1).max(100).optional().describe('Only this endpoint’s deliveries'),
});

function filterOf(query: LogQuery, endpointId?: string): DeliveryFilter {
  return {
    limit: query.limit ?? DEFAULT_LIMIT,
    ...(endpointId ? { endpointId } : {}),
    ...(query.status ? { status: query.status } : {}),
    ...(query.event ? { event: query.event } : {}),
    ...(query.q ? { search: query.q } : {}),
    ...(query.cursor ? { cursor: query.cursor } : {}),
  };
}

export const deliveryRoutes = [
  defineRoute<undefined, LogQuery>({
    method: 'get',
    path: '/v1/endpoints/:id/deliveries',
    summary: 'The endpoint’s delivery log, newest first, with filters and cursor paging',
    tag: 'Deliveries',
    auth: 'account',
    query: deliveriesQuery,
    responses: {
      200: { description: 'A page of deliveries', schema: deliveryPageSchema },
      400: err('A filter is invalid'),
      404: err('No such endpoint in this account'),
      429: err(searchesRefused),
    },
    async handle({ sender, account, params, query }) {
      await sender.getEndpoint(account.id, params.id!); // 404 for another account's endpoint
      const page = await sender.listDeliveries(account.id, filterOf(query, params.id));
      return { status: 200, json: { data: page.items.map(deliveryJson), next_cursor: page.nextCursor } };
    },
  }),
  defineRoute<undefined, z.infer<typeof allDeliveriesQuery>>({
    method: 'get',
    path: '/v1/deliveries',
    summary: 'The account’s delivery log across endpoints, newest first',
    tag: 'Deliveries',
    auth: 'account',
    query: allDeliveriesQuery,
    responses: {
      200: { description: 'A page of deliveries', schema: deliveryPageSchema },
      400: err('A filter is invalid'),
      404: err('endpoint_id names no endpoint of this account'),
      429: err(searchesRefused),
    },
    async handle({ sender, account, query }) {
      // A mistyped or another account's endpoint_id is a 404, as on the endpoint's own log route,
      // not an empty page that reads as "no deliveries".
      if (query.endpoint_id !== undefined) await sender.getEndpoint(account.id, query.endpoint_id);
      const page = await sender.listDeliveries(account.id, filterOf(query, query.endpoint_id));
      return { status: 200, json: { data: page.items.map(deliveryJson), next_cursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/deliveries/:id',
    summary: 'One delivery with its request body and every attempt',
    tag: 'Deliveries',
    auth: 'account',
    responses: {
      200: { description: 'The delivery', schema: deliveryDetailSchema },
      404: err('No such delivery in this account'),
    },
    async handle({ sender, account, params }) {
      const { delivery, attempts } = await sender.getDelivery(account.id, params.id!);
      const event = await sender.getEvent(account.id, delivery.eventId);
      return { status: 200, json: deliveryDetailJson(delivery, attempts, event) };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/deliveries/:id/retry',
    summary: 'Attempt the delivery again now, whatever its state',
    tag: 'Deliveries',
    auth: 'account',
    responses: {
      202: { description: 'Scheduled for now', schema: deliverySchema },
      404: err('No such delivery in this account'),
      409: err(
        'The endpoint is disabled (`endpoint_disabled`) or paused (`endpoint_paused`), or an attempt is in flight (`delivery_in_flight`)',
      ),
      429: err('Too many retries this minute; Retry-After says when to retry again'),
    },
    async handle({ sender, account, params }) {
      return { status: 202, json: deliveryJson(await sender.retryDelivery(account.id, params.id!)) };
    },
  }),
];
