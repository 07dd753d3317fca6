// server.mjs
import { webhookMiddleware } from '@linkhooks/receiver/express';
import express from 'express';

// During a rotation's grace, both secrets: the new one first, then the old one.
const { LINKHOOKS_SECRET: secret, LINKHOOKS_SECRET_OLD: oldSecret } = process.env;
if (!secret || !oldSecret) throw new Error('Set LINKHOOKS_SECRET (the new secret) and LINKHOOKS_SECRET_OLD');

const app = express();

app.post(
  '/webhooks/linkhooks',
  webhookMiddleware({
    secret: [secret, oldSecret],
    on: {
      click: async (event, ctx) => {
        // Expected until the grace ends: the service signs with the old secret till then.
        if (ctx.secretIndex === 1) console.log('delivery signed with the old secret');
        console.log(`click ${event.data.click_id}`); // your code here: save it, queue a job
      },
    },
  }),
);

const port = Number(process.env.PORT ?? 3000);
export const server = app.listen(port, () =>
  console.log(`Listening on http://localhost:${port}/webhooks/linkhooks`),
);
