import { captureRawBody, webhookMiddleware } from '@linkhooks/receiver/express';
import express from 'express';

export const app = express();

// express.json() mounted app-wide before the webhook route: keep the raw bytes with `verify`.
app.use(express.json({ verify: captureRawBody }));
app.post(
  '/webhooks/linkhooks',
  webhookMiddleware({
    secret: process.env.LINKHOOKS_SECRET!,
    on: { click: (event) => console.log('click', event.data.click_id) },
  }),
);
