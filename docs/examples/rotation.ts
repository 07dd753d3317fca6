import { webhookMiddleware } from '@linkhooks/receiver/express';
import express from 'express';
import { db } from './db.js';

export const app = express();

// During a rotation, accept both: the new secret first, then the old one.
app.post(
  '/webhooks/linkhooks',
  webhookMiddleware({
    secret: [process.env.LINKHOOKS_SECRET!, process.env.LINKHOOKS_SECRET_OLD!],
    on: {
      click: async (event, ctx) => {
        if (ctx.secretIndex === 1) console.warn('delivery signed with the old secret');
        await db.saveClick(event.data);
      },
    },
  }),
);
