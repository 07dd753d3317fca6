// server.mjs
import { serve } from '@hono/node-server';
import { webhookHandler } from '@linkhooks/receiver/fetch';
import { Hono } from 'hono';

const secret = process.env.LINKHOOKS_SECRET;
if (!secret) throw new Error('Set LINKHOOKS_SECRET to your endpoint secret (whsec_…)');

const handle = webhookHandler({
  secret,
  on: {
    // Your code goes here: save to your database, update a counter, queue a job.
    click: async (event) => {
      console.log(`click ${event.data.click_id} on /${event.data.link_slug} from ${event.data.country}`);
    },
  },
});

const app = new Hono();
// c.req.raw is the untouched Web Request: its body is still the raw bytes.
app.post('/webhooks/linkhooks', (c) => handle(c.req.raw));

const port = Number(process.env.PORT ?? 3000);
serve({ fetch: app.fetch, port }, () =>
  console.log(`Listening on http://localhost:${port}/webhooks/linkhooks`),
);
