// server.mjs
import { createMemoryStore } from '@linkhooks/receiver';
import { webhookMiddleware } from '@linkhooks/receiver/express';
import express from 'express';

const secret = process.env.LINKHOOKS_SECRET;
if (!secret) throw new Error('Set LINKHOOKS_SECRET to your endpoint secret (whsec_…)');

const app = express();

// At-least-once delivery: a retry may arrive after the handler already ran. With a store, each
// delivery's handler runs at most once to completion (keyed on click_id / conversion_id).
// Several processes or replicas? Use createRedisStore from '@linkhooks/receiver/redis' instead.
app.post(
  '/webhooks/linkhooks',
  webhookMiddleware({
    secret,
    idempotency: { store: createMemoryStore() },
    on: {
      click: async (event) => {
        console.log(`click ${event.data.click_id} counted once`);
      },
    },
  }),
);

const port = Number(process.env.PORT ?? 3000);
export const server = app.listen(port, () =>
  console.log(`Listening on http://localhost:${port}/webhooks/linkhooks`),
);
