import type { WebhookOptions } from '@linkhooks/receiver';
import { webhookPlugin } from '@linkhooks/receiver/fastify';
import { buildEvent, generateSecret, signedDelivery } from '@linkhooks/receiver/testing';
import Fastify, { type FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { adapterBattery } from './helpers/adapter-battery.js';
import { post } from './helpers/servers.js';
import { standardWebhooksBattery } from './helpers/standard-battery.js';

async function start(setup: (app: FastifyInstance) => Promise<void>) {
  const app = Fastify();
  await setup(app);
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  return { base, stop: () => app.close() };
}

const startFastify = async (options: WebhookOptions) => {
  const { base, stop } = await start(async (app) => {
    await app.register(webhookPlugin, { ...options, path: '/webhooks' });
  });
  return { url: `${base}/webhooks`, stop };
};

adapterBattery('fastify', startFastify);
standardWebhooksBattery('fastify', startFastify);

describe('fastify plugin scope', () => {
  it('keeps JSON parsing for the rest of the app', async () => {
    const secret = generateSecret();
    const clicks: string[] = [];
    const { base, stop } = await start(async (app) => {
      app.post('/before', async (request) => ({ parsed: request.body }));
      await app.register(webhookPlugin, {
        path: '/webhooks',
        secret,
        on: { click: (e) => void clicks.push(e.data.click_id) },
      });
      app.post('/after', async (request) => ({ parsed: request.body }));
    });
    try {
      const event = buildEvent('click');
      const { body, headers } = signedDelivery({ secret, body: JSON.stringify(event, null, 4) });
      expect((await post(`${base}/webhooks`, body, headers)).status).toBe(200);
      expect(clicks).toEqual([event.data.click_id]);
      for (const route of ['/before', '/after']) {
        const r = await fetch(base + route, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"a":[1]}',
        });
        expect(await r.json()).toEqual({ parsed: { a: [1] } });
      }
    } finally {
      await stop();
    }
  });

  it('verifies a delivery whatever its Content-Type header says, as the other adapters do', async () => {
    const secret = generateSecret();
    const clicks: string[] = [];
    const { base, stop } = await start(async (app) => {
      await app.register(webhookPlugin, {
        path: '/webhooks',
        secret,
        on: { click: (e) => void clicks.push(e.data.click_id) },
      });
    });
    try {
      const event = buildEvent('click');
      const { body, headers } = signedDelivery({ secret, event });
      // Fastify refuses a header that is not a media type (415) before any parser runs.
      for (const type of ['', ';;', 'text/plain']) {
        const answer = await post(`${base}/webhooks`, body, { ...headers, 'content-type': type });
        expect(answer.status, JSON.stringify(type)).toBe(200);
      }
      expect(clicks).toHaveLength(3);
    } finally {
      await stop();
    }
  });

  it("leaves an app hook's error to the app: not a body the plugin could not read", async () => {
    const errors: string[] = [];
    const { base, stop } = await start(async (app) => {
      app.addHook('onRequest', async () => {
        throw Object.assign(new Error('slow down'), { statusCode: 429 });
      });
      await app.register(webhookPlugin, {
        path: '/webhooks',
        secret: generateSecret(),
        on: {},
        onError: (e) => void errors.push(e.code),
      });
    });
    try {
      const answer = await post(`${base}/webhooks`, '{}', { 'content-type': 'application/json' });
      expect(answer.status).toBe(429);
      expect(errors).toEqual([]);
    } finally {
      await stop();
    }
  });

  it('answers body_already_parsed when an app hook replaced the body, never the empty-body 200', async () => {
    const errors: string[] = [];
    const secret = generateSecret();
    const { base, stop } = await start(async (app) => {
      app.addHook('preValidation', async (request) => {
        request.body = { parsed: true };
      });
      await app.register(webhookPlugin, {
        path: '/webhooks',
        secret,
        on: {},
        onError: (e) => void errors.push(e.code),
      });
    });
    try {
      const { body, headers } = signedDelivery({ secret, event: buildEvent('click') });
      const answer = await post(`${base}/webhooks`, body, headers);
      expect(answer.status).toBe(500);
      expect(answer.json.error?.code).toBe('body_already_parsed');
      expect(errors).toEqual(['body_already_parsed']);
    } finally {
      await stop();
    }
  });

  it('refuses to register without a path', async () => {
    const app = Fastify();
    await expect(app.register(webhookPlugin, { secret: generateSecret() } as never).ready()).rejects.toThrow(
      /path/,
    );
    await app.close();
  });
});
