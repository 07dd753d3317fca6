// server.mjs
import { webhookMiddleware } from '@linkhooks/receiver/express';
import express from 'express';

const secret = process.env.LINKHOOKS_SECRET;
if (!secret) throw new Error('Set LINKHOOKS_SECRET to your endpoint secret (whsec_…)');

const app = express();

// Mount the webhook route before any app-wide express.json(): the signature is checked over the
// raw bytes, so nothing may parse the body first.
app.post(
  '/webhooks/linkhooks',
  webhookMiddleware({
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
  }),
);

app.use(express.json()); // the rest of your app parses JSON as usual

const port = Number(process.env.PORT ?? 3000);
app.listen(port, () => console.log(`Listening on http://localhost:${port}/webhooks/linkhooks`));
