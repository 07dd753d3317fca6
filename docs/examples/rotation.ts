import { webhookMiddleware } from '@linkhooks/receiver/express';
import express from 'express';

export const app = express();

// During a rotation, accept both: the new secret first, then the old one.
app.post(
  '/webhooks/linkhooks',
  webhookMiddleware({
    secret: [process.env.LINKHOOKS_SECRET!, process.env.LINKHOOKS_SECRET_OLD!],
    on: {
      click: async (event, ctx) => {
        if (ctx.secretIndex === 1) console.warn('delivery signed with the old secret');
        console.log('click', event.data.click_id); // your code here: save it, queue a job
      },
    },
  }),
);
