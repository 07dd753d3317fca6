import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import type { WebhookOptions } from '@linkhooks/receiver';
import { webhookListener } from '@linkhooks/receiver/node';
import { generateSecret, sign } from '@linkhooks/receiver/testing';
import { describe, expect, it } from 'vitest';
import { adapterBattery } from './helpers/adapter-battery.js';
import { close, listen, post } from './helpers/servers.js';
import { standardWebhooksBattery } from './helpers/standard-battery.js';

const startNode = async (options: WebhookOptions) => {
  const server = createServer(webhookListener(options));
  const base = await listen(server);
  return { url: `${base}/anything`, stop: () => close(server) };
};

adapterBattery('node http', startNode);
standardWebhooksBattery('node http', startNode);

let server: Server;

/**
 * Starts `server`, sends it the headers of a POST and the first bytes of its 1,000-byte body, and
 * once `ready` resolves goes away without the rest; the server is closed after.
 */
async function hangUpMidBody(server: Server, ready: Promise<void>) {
  const base = new URL(await listen(server));
  try {
    const socket = connect(Number(base.port), base.hostname);
    socket.write(
      'POST /hooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"a":',
    );
    await ready;
    socket.destroy();
  } finally {
    await close(server);
  }
}

describe('node http: a request stream other code touched first, or closed early', () => {
  it('refuses a stream whose encoding was set, answering invalid_body rather than crashing on text chunks', async () => {
    const secret = generateSecret();
    const errors: string[] = [];
    const listener = webhookListener({ secret, on: {}, onError: (e) => errors.push(e.code) });
    const server = createServer((req, res) => {
      req.setEncoding('latin1');
      listener(req, res);
    });
    const base = await listen(server);
    try {
      // Two chunks at least: a body larger than one read.
      const body = JSON.stringify({ event: 'click', pad: 'x'.repeat(200_000) });
      const answer = await post(`${base}/hooks`, body, {
        'content-type': 'application/json',
        'x-service-signature': sign(body, secret),
      });
      // The receiver's side, not the delivery's: a 5xx, so the service delivers it again.
      expect(answer.status).toBe(500);
      expect(answer.json.error?.code).toBe('invalid_body');
      expect(errors).toEqual(['invalid_body']);
    } finally {
      await close(server);
    }
  });

  it('answers a request closed before its end as unreadable, not by waiting forever', async () => {
    const secret = generateSecret();
    let arrived!: () => void;
    const inHandler = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const seen = new Promise<string>((resolve) => {
      const listener = webhookListener({ secret, on: {}, onError: (e) => resolve(e.code) });
      // As an app's slow middleware would: the webhook handler gets the request only after its
      // client has gone.
      server = createServer((req, res) => {
        req.once('close', () => listener(req, res));
        arrived();
      });
    });
    // The server has the headers and waits for the rest; the client goes away instead.
    await hangUpMidBody(server, inHandler);
    expect(await seen).toBe('invalid_body');
  });

  it('answers a request whose client goes away in the middle of its body as unreadable', async () => {
    const secret = generateSecret();
    let firstBytes!: () => void;
    const reading = new Promise<void>((resolve) => {
      firstBytes = resolve;
    });
    const seen = new Promise<string>((resolve) => {
      const listener = webhookListener({ secret, on: {}, onError: (e) => resolve(e.code) });
      server = createServer((req, res) => {
        listener(req, res);
        // The handler reads already; told once the first part of the body reached it.
        req.once('data', () => firstBytes());
      });
    });
    await hangUpMidBody(server, reading);
    expect(await seen).toBe('invalid_body');
  });
});
