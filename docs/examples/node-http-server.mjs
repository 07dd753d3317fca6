// server.mjs
import { createServer } from 'node:http';
import { webhookListener } from '@linkhooks/receiver/node';

const secret = process.env.LINKHOOKS_SECRET;
if (!secret) throw new Error('Set LINKHOOKS_SECRET to your endpoint secret (whsec_…)');

const listener = webhookListener({
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

// Every POST to /webhooks/linkhooks is a delivery; the rest of your server stays as it is.
const server = createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/webhooks/linkhooks') return listener(req, res);
  res.writeHead(404).end();
});

const port = Number(process.env.PORT ?? 3000);
server.listen(port, () => console.log(`Listening on http://localhost:${port}/webhooks/linkhooks`));
