// server.mjs
import { webhookPlugin } from '@linkhooks/receiver/fastify';
import Fastify from 'fastify';

const secret = process.env.LINKHOOKS_SECRET;
if (!secret) throw new Error('Set LINKHOOKS_SECRET to your endpoint secret (whsec_…)');

const app = Fastify();

// The plugin parses its own route's body as raw bytes; the rest of the app keeps parsing JSON.
await app.register(webhookPlugin, {
  path: '/webhooks/linkhooks',
  secret,
  on: {
    // Your code goes here: save to your database, update a counter, queue a job.
    click: async (event) => {
      console.log(`click ${event.data.click_id} on /${event.data.link_slug} from ${event.data.country}`);
    },
    conversion: async (event) => {
      console.log(`conversion ${event.data.conversion_id}: ${event.data.revenue} ${event.data.currency}`);
    },
  },
});

const port = Number(process.env.PORT ?? 3000);
await app.listen({ port });
console.log(`Listening on http://localhost:${port}/webhooks/linkhooks`);
