import { createServer as createPlainServer, type ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { type AddressInfo, createServer as createTcpServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestCertificates } from '../../test/helpers/test-ca.mjs';
import { type AbandonSignal, createAbandon } from './abandon.js';
import {
  ANSWER_READ_MS,
  createDeliveryClient,
  type DeliveryClient,
  RESPONSE_HEADER_BYTES,
  RESPONSE_READ_BYTES,
  RESPONSE_SNIPPET_BYTES,
} from './http-client.js';

const certs = createTestCertificates();
const LONG_BYTES = 8 * 1024 * 1024;
let server: Server;
let origin: string;
let client: DeliveryClient;
// How each long answer ended: 'dropped' when the client closed the connection before the body was written.
const longAnswers: Promise<'dropped' | 'written'>[] = [];
const trickled: Promise<'dropped' | 'written'>[] = [];
const parked: ServerResponse[] = [];
let connections = 0;
let onParked: (() => void) | undefined;

beforeAll(async () => {
  server = createServer({ key: certs.key, cert: certs.cert }, (req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/long') {
        longAnswers.push(
          new Promise((resolve) =>
            res.once('close', () => resolve(res.writableFinished ? 'written' : 'dropped')),
          ),
        );
        res.writeHead(200, { 'content-length': LONG_BYTES });
        const chunk = Buffer.alloc(64 * 1024, 'a');
        let sent = 0;
        const more = () => {
          while (sent < LONG_BYTES) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', more);
          }
          res.end();
        };
        more();
      } else if (req.url === '/5000' || req.url === '/4096' || req.url === '/read-all') {
        const size = { '/5000': 5000, '/4096': RESPONSE_SNIPPET_BYTES, '/read-all': RESPONSE_READ_BYTES }[
          req.url
        ];
        res.end('b'.repeat(size));
      } else if (req.url === '/trickle') {
        // 5,000 bytes at once, then the rest of a 10,000-byte answer a byte every 100 ms: often
        // enough that undici's idle timer never fires, so only the attempt's deadline ends it.
        const drip = setInterval(() => res.write('t'), 100);
        trickled.push(
          new Promise((resolve) =>
            res.once('close', () => {
              clearInterval(drip);
              resolve(res.writableFinished ? 'written' : 'dropped');
            }),
          ),
        );
        res.writeHead(200, { 'content-length': 10_000 });
        res.write('t'.repeat(5000));
      } else if (req.url === '/stalled-200' || req.url === '/stalled-500') {
        // The status and a tenth of the body, then nothing until the deadline.
        parked.push(res);
        res.writeHead(req.url === '/stalled-200' ? 200 : 500, { 'content-length': 100 });
        res.write('s'.repeat(10));
      } else if (req.url === '/broken-200') {
        // The status and part of the body, then the connection goes.
        res.writeHead(200, { 'content-length': 100 });
        res.write('p'.repeat(10), () => res.socket?.destroy());
      } else if (req.url === '/nul') res.end('before\u0000after');
      else if (req.url === '/busy') res.writeHead(503, { 'retry-after': '120' }).end('busy');
      else if (req.url === '/ok-with-retry-after') res.writeHead(200, { 'retry-after': '120' }).end();
      else if (req.url?.startsWith('/headers/')) {
        res.writeHead(200, { 'x-large': 'h'.repeat(Number(req.url.slice('/headers/'.length))) }).end('ok');
      } else if (req.url === '/hang') {
        parked.push(res);
        onParked?.();
      } else res.end('ok');
    });
  });
  server.on('secureConnection', () => {
    connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `https://localhost:${(server.address() as AddressInfo).port}`;
  client = createDeliveryClient({ ca: certs.ca, allowPrivateNetworks: true, timeoutMs: 500 });
});

afterAll(async () => {
  await client.destroy();
  for (const res of parked) res.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const send = (path: string, signal?: AbandonSignal | AbortSignal) =>
  client.send({
    url: `${origin}${path}`,
    body: Buffer.from('{"event":"click"}'),
    headers: { 'content-type': 'application/json' },
    ...(signal ? { signal } : {}),
  });

describe('the delivery client', () => {
  it('keeps the first 4 KiB of a long answer and drops the connection instead of reading it all', async () => {
    const result = await send('/long');
    expect(result.outcome).toEqual({ ok: true, statusCode: 200 });
    expect(result.responseSnippet).toBe('a'.repeat(RESPONSE_SNIPPET_BYTES));
    expect(await longAnswers.at(-1)).toBe('dropped');
  });

  it('reads an answer of 4 KiB or more to its end, up to what it reads, and keeps the connection', async () => {
    const own = createDeliveryClient({ ca: certs.ca, allowPrivateNetworks: true });
    const before = connections;
    const paths = ['/5000', '/4096', '/read-all', '/5000', '/4096', '/read-all'];
    try {
      for (const path of paths) {
        const result = await own.send({ url: `${origin}${path}`, body: Buffer.from('{}'), headers: {} });
        expect(result.outcome).toEqual({ ok: true, statusCode: 200 });
        expect(result.responseSnippet).toBe('b'.repeat(RESPONSE_SNIPPET_BYTES));
      }
    } finally {
      await own.destroy();
    }
    // Answered at its first 4 KiB, an attempt may leave its body being read while the next one
    // starts: two connections at most, not one per answer.
    expect(connections - before).toBeLessThanOrEqual(2);
  });

  it('answers at the first 4 KiB, and cuts what is left of the answer at the deadline (here before its second)', async () => {
    const started = performance.now();
    const result = await send('/trickle');
    expect(result.outcome).toEqual({ ok: true, statusCode: 200 });
    expect(result.responseSnippet).toBe('t'.repeat(RESPONSE_SNIPPET_BYTES));
    expect(await trickled.at(-1)).toBe('dropped');
    expect(performance.now() - started).toBeGreaterThanOrEqual(450); // cut by the 500 ms deadline
  }, 10_000);

  it('takes the status as the answer: a 2xx whose body stalls or breaks off is delivered', async () => {
    const stalled = await send('/stalled-200');
    expect(stalled.outcome).toEqual({ ok: true, statusCode: 200 });
    expect(stalled.responseSnippet).toBe('s'.repeat(10));
    expect(stalled.durationMs).toBeGreaterThanOrEqual(450); // read until the deadline
    const broken = await send('/broken-200');
    expect(broken.outcome).toEqual({ ok: true, statusCode: 200 });
    expect(broken.responseSnippet).toBe('p'.repeat(10));
    // A refusal stays a refusal, by its status, not a time-out.
    const refused = await send('/stalled-500');
    expect(refused.outcome).toMatchObject({ ok: false, kind: 'http_status', statusCode: 500 });
  }, 10_000);

  it('reads an answer for a second once its status is in, not until the deadline', async () => {
    // A deadline far past the second: what ends the attempt is the status's second, not it.
    const patient = createDeliveryClient({ ca: certs.ca, allowPrivateNetworks: true, timeoutMs: 20_000 });
    try {
      const connected = connections;
      const stalled = await patient.send({
        url: `${origin}/stalled-200`,
        body: Buffer.from('{"event":"click"}'),
        headers: { 'content-type': 'application/json' },
      });
      expect(stalled.outcome).toEqual({ ok: true, statusCode: 200 });
      expect(stalled.responseSnippet).toBe('s'.repeat(10));
      expect(stalled.durationMs).toBeGreaterThanOrEqual(ANSWER_READ_MS - 50);
      expect(stalled.durationMs).toBeLessThan(10_000);
      // Its connection is dropped with it: the next request opens another.
      expect(
        await patient.send({ url: `${origin}/short`, body: Buffer.from('{}'), headers: {} }),
      ).toMatchObject({
        outcome: { ok: true, statusCode: 200 },
      });
      expect(connections - connected).toBe(2);
    } finally {
      await patient.destroy();
    }
  }, 15_000);

  it('shows a NUL in the answer as U+FFFD, and keeps a short answer whole', async () => {
    expect((await send('/nul')).responseSnippet).toBe('before\uFFFDafter');
    expect((await send('/short')).responseSnippet).toBe('ok');
  });

  it('takes a 2xx with large headers as delivered, and only headers past its limit as too large', async () => {
    const send = (bytes: number) =>
      client.send({ url: `${origin}/headers/${bytes}`, body: new Uint8Array(), headers: {} });
    expect((await send(40 * 1024)).outcome).toEqual({ ok: true, statusCode: 200 });
    expect((await send(RESPONSE_HEADER_BYTES + 1024)).outcome).toMatchObject({
      ok: false,
      kind: 'response_too_large',
    });
  });

  it('passes on Retry-After with a refusal only', async () => {
    const busy = await send('/busy');
    expect(busy.outcome).toMatchObject({ ok: false, kind: 'http_status', statusCode: 503 });
    expect(busy.retryAfter).toBe('120');
    expect(busy.responseSnippet).toBe('busy');
    const ok = await send('/ok-with-retry-after');
    expect(ok.outcome).toEqual({ ok: true, statusCode: 200 });
    expect(ok.retryAfter).toBeUndefined();
  });

  it('checks the URL again at each attempt: one stored as http:// is refused without a connection', async () => {
    // An endpoint's URL is checked when it is saved; a row written otherwise (an older version, a
    // database edited by hand) is refused here all the same, before any byte leaves.
    let reached = 0;
    const plain = createPlainServer((_req, res) => {
      reached++;
      res.end('ok');
    });
    plain.on('connection', () => {
      reached++;
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    try {
      const port = (plain.address() as AddressInfo).port;
      const refusals: [string, string][] = [
        [`http://127.0.0.1:${port}/hooks`, 'scheme http: is not allowed: the URL must use https'],
        [
          `https://user:pw@localhost:${port}/hooks`,
          'credentials in the URL (user:password@) are not allowed',
        ],
      ];
      for (const [url, message] of refusals) {
        const result = await client.send({
          url,
          body: Buffer.from('{"event":"click"}'),
          headers: { 'content-type': 'application/json' },
        });
        expect(result.outcome, url).toEqual({ ok: false, kind: 'blocked_address', message });
      }
      expect(reached).toBe(0);
    } finally {
      await new Promise<void>((resolve) => plain.close(() => resolve()));
    }
  });

  it('never agrees to finite-field Diffie-Hellman, whose prime the receiver chooses', async () => {
    // TLS 1.2 servers that prefer DHE: one offering it alone, one offering ECDHE after it.
    const offering = async (ciphers: string) => {
      const ciphersUsed: string[] = [];
      const tlsServer = createServer(
        {
          key: certs.key,
          cert: certs.cert,
          ciphers,
          honorCipherOrder: true,
          maxVersion: 'TLSv1.2',
          dhparam: 'auto',
        },
        (_req, res) => res.end('ok'),
      );
      tlsServer.on('secureConnection', (socket) => ciphersUsed.push(socket.getCipher().name));
      await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
      const port = (tlsServer.address() as AddressInfo).port;
      const result = await client.send({
        url: `https://localhost:${port}/hooks`,
        body: Buffer.from('{"event":"click"}'),
        headers: { 'content-type': 'application/json' },
      });
      await new Promise<void>((resolve) => tlsServer.close(() => resolve()));
      return { result, ciphersUsed };
    };
    const dheOnly = await offering('DHE-RSA-AES128-GCM-SHA256');
    expect(dheOnly.result.outcome).toMatchObject({ ok: false, kind: 'tls' });
    expect(dheOnly.ciphersUsed).toEqual([]);
    const either = await offering('DHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256');
    expect(either.result.outcome).toMatchObject({ ok: true, statusCode: 200 });
    expect(either.ciphersUsed).toEqual(['ECDHE-RSA-AES128-GCM-SHA256']);
  });

  it('gives up connecting at its connect limit, well inside the attempt’s deadline', async () => {
    // A listener that takes the TCP connection and never answers the TLS handshake.
    const held = new Set<Socket>();
    let taken = 0;
    const silent = createTcpServer((socket) => {
      taken++;
      held.add(socket);
      socket.on('close', () => held.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const limited = createDeliveryClient({
      ca: certs.ca,
      allowPrivateNetworks: true,
      timeoutMs: 10_000,
      connectTimeoutMs: 300,
    });
    try {
      const result = await limited.send({
        url: `https://127.0.0.1:${(silent.address() as AddressInfo).port}/hooks`,
        body: Buffer.from('{"event":"click"}'),
        headers: { 'content-type': 'application/json' },
      });
      expect(result.outcome).toMatchObject({
        ok: false,
        kind: 'timeout',
        message: expect.stringMatching(/^UND_ERR_CONNECT_TIMEOUT: /),
      });
      // undici checks its connect timers about every half second.
      expect(result.durationMs).toBeGreaterThanOrEqual(250);
      expect(result.durationMs).toBeLessThan(5_000);
      // One connection, given up: not tried again within the attempt.
      expect(taken).toBe(1);
    } finally {
      await limited.destroy();
      for (const socket of held) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('ends an unanswered attempt at its deadline, and one whose lease is lost at once', async () => {
    const late = await send('/hang');
    expect(late.outcome).toMatchObject({ ok: false, kind: 'timeout', message: 'no answer within 500 ms' });
    expect(late.durationMs).toBeGreaterThanOrEqual(450);

    const lease = createAbandon();
    const arrived = new Promise<void>((resolve) => {
      onParked = resolve;
    });
    const abandoned = send('/hang', lease.signal);
    await arrived;
    lease.abort();
    expect((await abandoned).outcome).toMatchObject({
      kind: 'timeout',
      message: 'abandoned: the lease was lost',
    });

    // A client may be given an AbortSignal too.
    const gone = new AbortController();
    gone.abort();
    expect((await send('/short', gone.signal)).outcome).toMatchObject({
      message: 'abandoned: the lease was lost',
    });
  });
});
