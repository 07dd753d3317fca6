import { createServer } from 'node:http';
import { webhookListener } from '@linkhooks/receiver/node';
import { db } from './db.js';

export const server = createServer(
  webhookListener({
    secret: process.env.LINKHOOKS_SECRET!,
    on: {
      click: (event) => db.saveClick(event.data),
      conversion: (event) => db.saveConversion(event.data),
    },
  }),
);
// server.listen(3000);
