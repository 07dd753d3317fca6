/**
 * The guides' TypeScript snippets that are parts of an app (a route, a worker, a handler), run as
 * the file the page imports: each gets a real signed delivery (and a forged one) and its handler's
 * effect is checked. The complete servers the reader runs as pasted are in as-pasted.test.ts.
 */

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildEvent, generateSecret, signedDelivery, signedRequest } from '@linkhooks/receiver/testing';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort } from './tools.js';

const SECRET = generateSecret();
const OLD_SECRET = generateSecret();
process.env.LINKHOOKS_SECRET = SECRET;
process.env.LINKHOOKS_SECRET_OLD = OLD_SECRET;

// The examples' handlers print what they handled (`click`, its id) where the reader's code goes:
// the test reads it back.
const logged = vi.spyOn(console, 'log').mockImplementation(() => {});
const handled = (name: string) => logged.mock.calls.filter((call) => call[0] === name).map((call) => call[1]);
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  logged.mockClear();
});

/** Listens on a loopback port; closed after the test. */
async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * Starts a whole server example, as the page has the reader save and run it (JavaScript: typed
 * here), on a free port; its route's URL.
 */
async function startServer(file: string): Promise<string> {
  process.env.PORT = String(await freePort());
  const { server } = (await import(`../examples/${file}`)) as { server: Server };
  if (!server.listening) await new Promise((resolve) => server.once('listening', resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${process.env.PORT}/webhooks/linkhooks`;
}

async function post(
  url: string,
  secret = SECRET,
  event: ReturnType<typeof buildEvent> = buildEvent('click'),
) {
  const { body, headers } = signedDelivery({ secret, event });
  const response = await fetch(url, { method: 'POST', headers, body });
  return { event, status: response.status, json: await response.json() };
}

/** Checks an HTTP example: a signed click is handled once, a forged one is refused unhandled. */
async function checkServer(url: string) {
  const { event, status, json } = await post(url);
  expect(status).toBe(200);
  expect(json).toEqual({ received: true });
  expect(handled('click')).toEqual([event.data.click_id]);
  const forged = await post(url, generateSecret());
  expect(forged.status).toBe(401);
  expect(handled('click')).toHaveLength(1);
}

describe('guide examples', () => {
  beforeAll(() => {
    expect(process.env.LINKHOOKS_SECRET).toMatch(/^whsec_/);
  });

  it('express-json-first.ts keeps the raw bytes behind an app-wide express.json()', async () => {
    const { app } = await import('../examples/express-json-first.js');
    await checkServer(`${await listen(createServer(app))}/webhooks/linkhooks`);
  });

  it('next-app-route.ts', async () => {
    const { POST } = await import('../examples/next-app-route.js');
    const event = buildEvent('conversion');
    const ok = await POST(
      await signedRequest('https://app.example/api/webhooks/linkhooks', { secret: SECRET, event }),
    );
    expect(ok.status).toBe(200);
    expect(handled('conversion')).toEqual([event.data.conversion_id]);
    const forged = await POST(
      await signedRequest('https://app.example/api/webhooks/linkhooks', { secret: OLD_SECRET, event }),
    );
    expect(forged.status).toBe(401);
  });

  it('next-pages-route.ts, with the body parser off', async () => {
    const route = await import('../examples/next-pages-route.js');
    expect(route.config).toEqual({ api: { bodyParser: false } });
    await checkServer(`${await listen(createServer(route.default))}/api/webhooks/linkhooks`);
  });

  it('edge-worker.ts', async () => {
    const worker = (await import('../examples/edge-worker.js')).default;
    const event = buildEvent('click');
    const ok = await worker.fetch(await signedRequest('https://worker.example/', { secret: SECRET, event }));
    expect(ok.status).toBe(200);
    expect(handled('click')).toEqual([event.data.click_id]);
  });

  it('idempotency-server.mjs runs the handler once for a delivery sent twice', async () => {
    const url = await startServer('idempotency-server.mjs');
    const event = buildEvent('click');
    const first = await post(url, SECRET, event);
    const again = await post(url, SECRET, event);
    expect(first.json).toEqual({ received: true });
    expect(again.json).toEqual({ received: true, duplicate: true });
    expect(logged.mock.calls).toEqual([
      [`Listening on http://localhost:${process.env.PORT}/webhooks/linkhooks`],
      [`click ${event.data.click_id} counted once`],
    ]);
  });

  it('rotation-server.mjs accepts the new and the old secret, says which, and nothing else', async () => {
    const url = await startServer('rotation-server.mjs');
    const [byNew, byOld] = [buildEvent('click'), buildEvent('click')];
    expect((await post(url, SECRET, byNew)).status).toBe(200);
    expect((await post(url, OLD_SECRET, byOld)).status).toBe(200);
    expect((await post(url, generateSecret())).status).toBe(401);
    expect(logged.mock.calls).toEqual([
      [`Listening on http://localhost:${process.env.PORT}/webhooks/linkhooks`],
      [`click ${byNew.data.click_id}`],
      ['delivery signed with the old secret'],
      [`click ${byOld.data.click_id}`],
    ]);
  });

  it('standard-webhooks-server.mjs takes the Standard Webhooks form, once per webhook-id, and refuses the rest', async () => {
    const url = await startServer('standard-webhooks-server.mjs');
    const send = async (delivery: { body: string; headers: Record<string, string> }) => {
      const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
      return { status: response.status, json: await response.json() };
    };
    const event = buildEvent('click');
    const delivery = signedDelivery({
      secret: SECRET,
      event,
      scheme: 'standard-webhooks',
      eventId: 'evt_sw_1',
    });
    expect(await send(delivery)).toEqual({ status: 200, json: { received: true } });
    const clicks = () => logged.mock.calls.filter((call) => String(call[0]).startsWith('click '));
    expect(clicks()).toEqual([[`click ${event.data.click_id} (webhook-id evt_sw_1)`]]);
    expect((await send(delivery)).json).toEqual({
      received: true,
      duplicate: true,
      code: 'replayed_webhook_id',
    });
    // Body-only, stale, and a test delivery (acknowledged, not handled).
    expect((await send(signedDelivery({ secret: SECRET, event: buildEvent('click') }))).status).toBe(401);
    const stale = new Date(Date.now() - 3_600_000);
    expect(
      (await send(signedDelivery({ secret: SECRET, event, scheme: 'standard-webhooks', timestamp: stale })))
        .status,
    ).toBe(401);
    const test = signedDelivery({
      secret: SECRET,
      event: buildEvent('click'),
      scheme: 'standard-webhooks',
      test: true,
    });
    expect((await send(test)).status).toBe(200);
    expect(clicks()).toHaveLength(1);
  });

  it('construct-event.ts verifies by hand', async () => {
    const { handleDelivery } = await import('../examples/construct-event.js');
    const { body, headers } = signedDelivery({ secret: SECRET, event: buildEvent('click') });
    expect(handleDelivery(Buffer.from(body), headers['x-service-signature'])).toBe(200);
    expect(handled('click')).toHaveLength(1);
    expect(handleDelivery(Buffer.from(`${body} `), headers['x-service-signature'])).toBe(401);
    expect(handleDelivery(Buffer.from(body), undefined)).toBe(401);
  });
});
