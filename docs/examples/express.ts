import { webhookMiddleware } from '@linkhooks/receiver/express';
import express from 'express';
import { db } from './db.js';

export const app = express();

// Mount the webhook route before any app-wide express.json(): the signature is checked over the
// raw bytes, so nothing may parse the body first.
app.post(
  '/webhooks/linkhooks',
  webhookMiddleware({
    secret: process.env.LINKHOOKS_SECRET!,
    on: {
      click: async (event) => {
        await db.saveClick(event.data); // typed: click_id, link_id, country, is_unique, …
      },
      conversion: async (event) => {
        await db.saveConversion(event.data);
      },
    },
  }),
);

app.use(express.json()); // the rest of your app parses JSON as usual
