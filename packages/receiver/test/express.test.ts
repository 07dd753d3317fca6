import { createServer } from 'node:http';
import type { WebhookError, WebhookOptions } from '@linkhooks/receiver';
import { captureRawBody, webhookMiddleware } from '@linkhooks/receiver/express';
import { buildEvent, generateSecret, signedDelivery } from '@linkhooks/receiver/testing';
import express from 'express';
import express4 from 'express4';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { adapterBattery } from './helpers/adapter-battery.js';
import { close, listen, post } from './helpers/servers.js';
import { standardWebhooksBattery } from './helpers/standard-battery.js';

const startExpress = async (options: WebhookOptions) => {
  const app = express();
  app.all('/webhooks', webhookMiddleware(options));
  const server = createServer(app);
  const base = await listen(server);
  return { url: `${base}/webhooks`, stop: () => close(server) };
};

adapterBattery('express', startExpress);
standardWebhooksBattery('express', startExpress);

describe('express with a body parser mounted app-wide', () => {
  const secret = generateSecret();
  let stop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await stop?.();
    stop = undefined;
  });

  async function serve(setup: (app: express.Express) => void) {
    const app = express();
    setup(app);
    const server = createServer(app);
    const base = await listen(server);
    stop = () => close(server);
    return base;
  }

  it('answers at once with body_already_parsed, and tells onError the mount order, when express.json() ran first', async () => {
    let ran = false;
    const errors: WebhookError[] = [];
    const base = await serve((app) => {
      app.use(express.json());
      app.post(
        '/webhooks',
        webhookMiddleware({
          secret,
          on: {
            click: () => {
              ran = true;
            },
          },
          onError: (e) => errors.push(e),
        }),
      );
    });
    const { body, headers } = signedDelivery({ secret, event: buildEvent('click') });
    const answer = await post(`${base}/webhooks`, body, headers);
    expect(answer.status).toBe(500);
    expect(answer.json.error?.code).toBe('body_already_parsed');
    expect(answer.json.error?.hint).toBeUndefined();
    expect(errors[0]?.hint).toMatch(/express\.json\(\)/);
    expect(errors[0]?.hint).toMatch(/captureRawBody/);
    expect(ran).toBe(false);
  });

  it('verifies from the bytes kept by captureRawBody when express.json() runs first', async () => {
    const clicks: string[] = [];
    const base = await serve((app) => {
      app.use(express.json({ verify: captureRawBody }));
      app.post(
        '/webhooks',
        webhookMiddleware({ secret, on: { click: (e) => void clicks.push(e.data.click_id) } }),
      );
      app.post('/other', (req, res) => void res.json({ parsed: req.body }));
    });
    const event = buildEvent('click');
    // Pretty-printed: a re-serialised body would not match; only the captured bytes do.
    const body = JSON.stringify(event, null, 2);
    const { headers } = signedDelivery({ secret, body });
    expect((await post(`${base}/webhooks`, body, headers)).status).toBe(200);
    expect(clicks).toEqual([event.data.click_id]);
    const other = await fetch(`${base}/other`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(await other.json()).toEqual({ parsed: { a: 1 } });
  });

  it('holds bytes a parser kept to maxBodyBytes, whatever the parser allowed', async () => {
    const clicks: string[] = [];
    const base = await serve((app) => {
      app.use('/captured', express.json({ verify: captureRawBody, limit: '10mb' }));
      app.use('/raw', express.raw({ type: 'application/json', limit: '10mb' }));
      for (const path of ['/captured', '/raw']) {
        app.post(
          path,
          webhookMiddleware({
            secret,
            maxBodyBytes: 4096,
            on: { click: (e) => void clicks.push(e.data.click_id) },
          }),
        );
      }
    });
    const small = signedDelivery({ secret, event: buildEvent('click') });
    const large = signedDelivery({ secret, body: JSON.stringify(buildEvent('click')).padEnd(5000) });
    for (const path of ['/captured', '/raw']) {
      expect((await post(`${base}${path}`, small.body, small.headers)).status, path).toBe(200);
      const refused = await post(`${base}${path}`, large.body, large.headers);
      expect(refused.status, path).toBe(413);
      expect(refused.json, path).toMatchObject({ error: { code: 'payload_too_large' } });
    }
    expect(clicks).toHaveLength(2);
  });

  it('verifies the Buffer left by express.raw()', async () => {
    const clicks: string[] = [];
    const base = await serve((app) => {
      app.use(express.raw({ type: 'application/json' }));
      app.post(
        '/webhooks',
        webhookMiddleware({ secret, on: { click: (e) => void clicks.push(e.data.click_id) } }),
      );
    });
    const event = buildEvent('click');
    const { body, headers } = signedDelivery({ secret, event });
    expect((await post(`${base}/webhooks`, body, headers)).status).toBe(200);
    expect(clicks).toEqual([event.data.click_id]);
  });

  it('fails at start-up, not per request, when the secret is missing or a handler name is wrong', () => {
    expect(() => webhookMiddleware({ secret: '' })).toThrow(/secret/);
    expect(() => webhookMiddleware({ secret: undefined as unknown as string })).toThrow(/secret/);
    // What `LINKHOOKS_SECRET="${value}"` writes when value was never set: anyone could sign with it.
    expect(() => webhookMiddleware({ secret: 'undefined' })).toThrow(
      'linkhooks: The secret is the text "undefined": the variable it was read from is not set. Pass the endpoint\'s signing secret (whsec_…), for example from LINKHOOKS_SECRET.',
    );
    expect(() => webhookMiddleware({ secret: [secret, ' '] })).toThrow(
      /^linkhooks: In the secret list, entry 1 \(the second\): The secret is blank\./,
    );
    // A rotation's old secret from a variable that is not set: which entry, by name.
    expect(() =>
      webhookMiddleware({ secret: [secret, process.env.LINKHOOKS_NEVER_SET as unknown as string] }),
    ).toThrow(
      /^linkhooks: In the secret list, entry 1 \(the second\): The secret must be a non-empty string\./,
    );
    expect(() => webhookMiddleware({ secret: [] })).toThrow(/^linkhooks: The secret list is empty\./);
    expect(() => webhookMiddleware({ secret, on: { clicks: () => {} } as never })).toThrow(
      /no event is named "clicks"/,
    );
  });
});

describe('express 4 with express.json() mounted app-wide', () => {
  // Express 4's express.json() sets `req.body` to {} on every request, read or not: an empty body
  // or another content type leaves the stream unread, and the middleware reads it itself.
  const secret = generateSecret();
  const clicks: string[] = [];
  const app = express4();
  app.use('/captured', express4.json({ verify: captureRawBody, limit: '1mb' }));
  app.use('/parsed', express4.json());
  const middleware = webhookMiddleware({ secret, on: { click: (e) => void clicks.push(e.data.click_id) } });
  app.post(['/captured', '/parsed'], middleware);
  const server = createServer(app);
  let base = '';
  beforeAll(async () => {
    base = await listen(server);
  });
  afterAll(() => close(server));
  beforeEach(() => {
    clicks.length = 0;
  });

  it('verifies from captureRawBody, and reads what express.json() left unread itself', async () => {
    const url = `${base}/captured`;
    const event = buildEvent('click');
    const body = JSON.stringify(event, null, 2);
    const { headers } = signedDelivery({ secret, body });
    expect((await post(url, body, headers)).status).toBe(200);
    // The setup check: an empty POST answers 200.
    expect(await post(url, '', {})).toMatchObject({ status: 200, json: { received: true } });
    const text = await post(url, body, { ...headers, 'content-type': 'text/plain' });
    expect(text.status).toBe(200);
    expect(clicks).toEqual([event.data.click_id, event.data.click_id]);
    // Unsigned, unread by express.json(): refused by the signature check, not taken as parsed.
    const unsigned = await post(url, body, { 'content-type': 'text/plain' });
    expect([unsigned.status, unsigned.json.error?.code]).toEqual([401, 'invalid_signature']);
  });

  it('still answers body_already_parsed when express.json() read the body without captureRawBody', async () => {
    const { body, headers } = signedDelivery({ secret, event: buildEvent('click') });
    const answer = await post(`${base}/parsed`, body, headers);
    expect([answer.status, answer.json.error?.code]).toEqual([500, 'body_already_parsed']);
    expect(clicks).toEqual([]);
  });
});
