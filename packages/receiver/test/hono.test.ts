/**
 * The `/fetch` adapter inside a real Hono app on a real loopback port (design C7).
 * `@hono/node-server` is not a dependency here, so a small bridge below turns Node's
 * `IncomingMessage` into a Web `Request` whose body is the raw byte stream, and writes the
 * `Response` back; Hono and the SDK see exactly what they would on any fetch runtime.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createMemoryStore, type WebhookOptions } from '@linkhooks/receiver';
import { webhookHandler } from '@linkhooks/receiver/fetch';
import { buildEvent, generateSecret, signedDelivery } from '@linkhooks/receiver/testing';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { adapterBattery } from './helpers/adapter-battery.js';
import { close, listen, post } from './helpers/servers.js';
import { standardWebhooksBattery } from './helpers/standard-battery.js';

type FetchApp = { fetch: (request: Request) => Response | Promise<Response> };

/**
 * The request body as a Web stream that reads nothing until the app reads it. An untouched body
 * (a 413 on Content-Length, a 405) is then drained by Node itself once the response ends, and a
 * cancelled one is drained here, so the connection stays usable for the next request.
 */
function requestBody(req: IncomingMessage): ReadableStream<Uint8Array> {
  let chunks: AsyncIterator<Buffer> | undefined;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        chunks ??= req.iterator({ destroyOnReturn: false });
        const next = await chunks.next();
        if (next.done) {
          controller.close();
        } else {
          const chunk = next.value;
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        }
      },
      async cancel() {
        await chunks?.return?.();
        req.resume();
      },
    },
    { highWaterMark: 0 },
  );
}

function toRequest(req: IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  }
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  // `duplex` is required by Node's fetch for a stream body and missing from the DOM typings.
  const init: RequestInit & { duplex?: 'half' } = { method, headers, signal };
  if (hasBody) {
    init.body = requestBody(req);
    init.duplex = 'half';
  }
  return new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url ?? '/'}`, init);
}

async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  res.statusCode = response.status;
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') res.setHeader(name, value);
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) res.setHeader('set-cookie', cookies);
  if (!response.body) {
    res.end();
    return;
  }
  await pipeline(Readable.fromWeb(response.body as import('node:stream/web').ReadableStream), res);
}

/** Serves a fetch-style app (Hono's `app.fetch`) with `node:http` on an ephemeral loopback port. */
async function serveFetch(app: FetchApp): Promise<{ base: string; stop: () => Promise<void> }> {
  const server = createServer(async (req, res) => {
    const aborted = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) aborted.abort();
    });
    try {
      await writeResponse(await app.fetch(toRequest(req, aborted.signal)), res);
    } catch (error) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`bridge error: ${(error as Error).message}`);
    }
  });
  const base = await listen(server);
  return { base, stop: () => close(server) };
}

// The shared battery: every method is routed to the handler so its own 405 is what GET gets.
const startHono = async (options: WebhookOptions) => {
  const handle = webhookHandler(options);
  const app = new Hono();
  app.all('/webhooks', (c) => handle(c.req.raw));
  const { base, stop } = await serveFetch(app);
  return { url: `${base}/webhooks`, stop };
};

adapterBattery('hono', startHono);
standardWebhooksBattery('fetch (in Hono)', startHono);

describe('hono: the documented route', () => {
  const secret = generateSecret();
  let stop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await stop?.();
    stop = undefined;
  });

  async function serve(build: (app: Hono) => void): Promise<string> {
    const app = new Hono();
    build(app);
    const served = await serveFetch(app);
    stop = served.stop;
    return served.base;
  }

  it("verifies and handles a click through `app.post('/webhooks', (c) => handle(c.req.raw))`", async () => {
    const clicks: string[] = [];
    const handle = webhookHandler({ secret, on: { click: (e) => void clicks.push(e.data.click_id) } });
    const base = await serve((app) => {
      app.get('/health', (c) => c.text('ok'));
      app.post('/webhooks', (c) => handle(c.req.raw));
    });
    const event = buildEvent('click');
    const { body, headers } = signedDelivery({ secret, event });
    const response = await fetch(`${base}/webhooks`, { method: 'POST', headers, body: body as string });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({ received: true });
    expect(clicks).toEqual([event.data.click_id]);
    // Other routes of the app are unaffected.
    expect(await (await fetch(`${base}/health`)).text()).toBe('ok');
  });

  it('runs a click once when it is delivered twice through Hono, and answers the duplicate 200', async () => {
    const clicks: string[] = [];
    const options: WebhookOptions = {
      secret,
      on: { click: (e) => void clicks.push(e.data.click_id) },
      idempotency: { store: createMemoryStore() },
    };
    const handle = webhookHandler(options);
    const base = await serve((app) => {
      app.post('/webhooks', (c) => handle(c.req.raw));
    });
    const event = buildEvent('click');
    const { body, headers } = signedDelivery({ secret, event, attempt: 1 });
    const first = await post(`${base}/webhooks`, body, headers);
    const second = await post(`${base}/webhooks`, body, { ...headers, 'x-service-attempt': '2' });
    expect(first).toEqual({ status: 200, json: { received: true } });
    expect(second).toEqual({ status: 200, json: { received: true, duplicate: true } });
    expect(clicks).toEqual([event.data.click_id]);
  });

  it('answers 413 to a chunked body (no Content-Length) once it passes maxBodyBytes, and keeps serving', async () => {
    let ran = false;
    const handle = webhookHandler({
      secret,
      on: {
        click: () => {
          ran = true;
        },
      },
      maxBodyBytes: 16 * 1024,
    });
    const framing: string[] = [];
    const base = await serve((app) => {
      app.post('/webhooks', (c) => {
        framing.push(c.req.header('content-length') ?? `chunked:${c.req.header('transfer-encoding')}`);
        return handle(c.req.raw);
      });
    });
    const { body, headers } = signedDelivery({
      secret,
      event: buildEvent('click', { data: { city: 'x'.repeat(64 * 1024) } }),
    });
    const bytes = new TextEncoder().encode(body as string);
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 4096) controller.enqueue(bytes.subarray(i, i + 4096));
        controller.close();
      },
    });
    const init: RequestInit & { duplex: 'half' } = { method: 'POST', headers, body: chunked, duplex: 'half' };
    const response = await fetch(`${base}/webhooks`, init);
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('payload_too_large');
    expect(ran).toBe(false);
    const small = signedDelivery({ secret, event: buildEvent('click') });
    expect((await post(`${base}/webhooks`, small.body, small.headers)).status).toBe(200);
    expect(ran).toBe(true);
    // The first body really was streamed without a declared length, so the read itself was capped.
    expect(framing).toEqual([
      'chunked:chunked',
      String(new TextEncoder().encode(small.body as string).length),
    ]);
  });

  it('fails loudly, without hanging or running the handler, when a Hono middleware read the body first', async () => {
    let ran = false;
    const errors: string[] = [];
    const hints: (string | undefined)[] = [];
    const handle = webhookHandler({
      secret,
      on: {
        click: () => {
          ran = true;
        },
      },
      onError: (e) => {
        errors.push(e.code);
        hints.push(e.hint);
      },
    });
    const base = await serve((app) => {
      app.use('/webhooks', async (c, next) => {
        await c.req.json();
        await next();
      });
      app.post('/webhooks', (c) => handle(c.req.raw));
    });
    const { body, headers } = signedDelivery({ secret, event: buildEvent('click') });
    const answer = await post(`${base}/webhooks`, body, headers);
    expect(answer.status).toBe(500);
    expect(answer.json.error?.code).toBe('body_already_parsed');
    expect(answer.json.error?.hint).toBeUndefined();
    expect(errors).toEqual(['body_already_parsed']);
    expect(hints[0]).toMatch(/untouched Request/);
    expect(ran).toBe(false);
  });
});

describe('fetch handler: a body stream that fails', () => {
  it('answers invalid_body and tells onError so, not a handler fault', async () => {
    const errors: string[] = [];
    const handler = webhookHandler({ secret: generateSecret(), on: {}, onError: (e) => errors.push(e.code) });
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"event":'));
      },
      pull(controller) {
        controller.error(new Error('the client went away'));
      },
    });
    const request = new Request('https://receiver.example/hooks', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-signature': 'a'.repeat(64) },
      body,
      duplex: 'half',
    } as RequestInit);
    const response = await handler(request);
    expect(response.status).toBe(500);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('invalid_body');
    expect(errors).toEqual(['invalid_body']);
  });
});
