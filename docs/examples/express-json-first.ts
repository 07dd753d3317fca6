import { captureRawBody, webhookMiddleware } from '@linkhooks/receiver/express';
import express from 'express';

export const app = express();

// express.json() mounted app-wide before the webhook route: keep the raw bytes with `verify`, and
// take bodies as large as the middleware does (1 MiB): express.json()'s own limit is 100 kB, and it
// would answer a larger delivery 413 before the middleware sees it.
app.use(express.json({ verify: captureRawBody, limit: '1mb' }));
app.post(
  '/webhooks/linkhooks',
  webhookMiddleware({
    secret: process.env.LINKHOOKS_SECRET!,
    on: { click: (event) => console.log('click', event.data.click_id) },
  }),
);
