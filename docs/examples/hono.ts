import { webhookHandler } from '@linkhooks/receiver/fetch';
import { Hono } from 'hono';
import { db } from './db.js';

const handle = webhookHandler({
  secret: process.env.LINKHOOKS_SECRET!,
  on: { click: (event) => db.saveClick(event.data) },
});

export const app = new Hono();
// c.req.raw is the untouched Web Request: its body is still the raw bytes.
app.post('/webhooks/linkhooks', (c) => handle(c.req.raw));
