// app/api/webhooks/linkhooks/route.ts
import { webhookRoute } from '@linkhooks/receiver/next';
import { db } from './db.js';

export const POST = webhookRoute({
  secret: process.env.LINKHOOKS_SECRET!,
  on: {
    click: (event) => db.saveClick(event.data),
    conversion: (event) => db.saveConversion(event.data),
  },
});
