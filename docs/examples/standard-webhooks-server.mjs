// server.mjs
import { createMemoryStore } from '@linkhooks/receiver';
import { webhookMiddleware } from '@linkhooks/receiver/express';
import express from 'express';

const secret = process.env.LINKHOOKS_SECRET;
if (!secret) throw new Error('Set LINKHOOKS_SECRET to your endpoint secret (whsec_…)');

const app = express();

// The endpoint has Standard Webhooks turned on: webhook-id, webhook-timestamp and webhook-signature
// are required, the timestamp must be within 5 minutes of this server's clock, and a delivery
// signed over the body alone is refused. The store remembers each webhook-id, so a replayed
// request is answered without running the handler again.
app.post(
  '/webhooks/linkhooks',
  webhookMiddleware({
    secret,
    scheme: 'standard-webhooks',
    idempotency: { store: createMemoryStore() },
    on: {
      click: async (event, ctx) => {
        if (ctx.test) return; // "send test" from the dashboard: nothing to save
        console.log(`click ${event.data.click_id} (webhook-id ${ctx.webhookId})`); // your code here
      },
    },
  }),
);

const port = Number(process.env.PORT ?? 3000);
export const server = app.listen(port, () =>
  console.log(`Listening on http://localhost:${port}/webhooks/linkhooks`),
);
