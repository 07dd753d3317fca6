import { createMemoryStore } from '@linkhooks/receiver';
import { webhookMiddleware } from '@linkhooks/receiver/express';
import express from 'express';

export const app = express();

// The endpoint has Standard Webhooks turned on: webhook-id, webhook-timestamp and webhook-signature
// are required, the timestamp must be within 5 minutes of this server's clock, and a delivery
// signed over the body alone is refused. The store remembers each webhook-id, so a replayed
// request is answered without running the handler again.
app.post(
  '/webhooks/linkhooks',
  webhookMiddleware({
    secret: process.env.LINKHOOKS_SECRET!,
    scheme: 'standard-webhooks',
    idempotency: { store: createMemoryStore() },
    on: {
      click: async (event, ctx) => {
        if (ctx.test) return; // "send test" from the dashboard: nothing to save
        console.log('click', event.data.click_id, ctx.webhookId); // your code here
      },
    },
  }),
);
