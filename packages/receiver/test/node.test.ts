import { createServer } from 'node:http';
import type { WebhookOptions } from '@linkhooks/receiver';
import { webhookListener } from '@linkhooks/receiver/node';
import { adapterBattery } from './helpers/adapter-battery.js';
import { close, listen } from './helpers/servers.js';
import { standardWebhooksBattery } from './helpers/standard-battery.js';

const startNode = async (options: WebhookOptions) => {
  const server = createServer(webhookListener(options));
  const base = await listen(server);
  return { url: `${base}/anything`, stop: () => close(server) };
};

adapterBattery('node http', startNode);
standardWebhooksBattery('node http', startNode);
