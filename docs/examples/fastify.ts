import { webhookPlugin } from '@linkhooks/receiver/fastify';
import Fastify from 'fastify';
import { db } from './db.js';

export const app = Fastify();

// The plugin parses its own route's body as raw bytes; the rest of the app keeps parsing JSON.
await app.register(webhookPlugin, {
  path: '/webhooks/linkhooks',
  secret: process.env.LINKHOOKS_SECRET!,
  on: {
    click: (event) => db.saveClick(event.data),
    conversion: (event) => db.saveConversion(event.data),
  },
});
