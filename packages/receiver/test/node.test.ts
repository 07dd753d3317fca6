import { createServer } from 'node:http';
import { webhookListener } from '@linkhooks/receiver/node';
import { adapterBattery } from './helpers/adapter-battery.js';
import { close, listen } from './helpers/servers.js';

adapterBattery('node http', async (options) => {
  const server = createServer(webhookListener(options));
  const base = await listen(server);
  return { url: `${base}/anything`, stop: () => close(server) };
});
