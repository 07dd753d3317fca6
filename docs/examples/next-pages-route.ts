// pages/api/webhooks/linkhooks.ts
import { webhookApiRoute } from '@linkhooks/receiver/next';
import { db } from './db.js';

// Next must not parse the body: the signature covers the raw bytes.
export const config = { api: { bodyParser: false } };

export default webhookApiRoute({
  secret: process.env.LINKHOOKS_SECRET!,
  on: {
    click: (event) => db.saveClick(event.data),
    conversion: (event) => db.saveConversion(event.data),
  },
});
