import { createMemoryStore } from '@linkhooks/receiver';
import { webhookMiddleware } from '@linkhooks/receiver/express';
import express from 'express';

export const app = express();

// At-least-once delivery: a retry may arrive after the handler already ran. With a store, each
// delivery's handler runs at most once to completion (keyed on click_id / conversion_id).
// Several processes? Use createRedisStore from '@linkhooks/receiver/redis' instead.
app.post(
  '/webhooks/linkhooks',
  webhookMiddleware({
    secret: process.env.LINKHOOKS_SECRET!,
    idempotency: { store: createMemoryStore() },
    on: { click: (event) => console.log('click', event.data.click_id) },
  }),
);
