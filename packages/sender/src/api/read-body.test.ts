import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBody } from './read-body.js';

// Each request's read, settled or not: a read that never ends leaves its test waiting (and failing
// on the test's time-out) rather than passing.
const reads: Promise<Buffer>[] = [];
let arrived: ((req: IncomingMessage) => void) | undefined;
let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((req, res) => {
    const read = readBody(req);
    reads.push(read);
    arrived?.(req);
    read.then(
      (body) => res.end(`read ${body.length} bytes`),
      () => res.destroy(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const nextRequest = () =>
  new Promise<IncomingMessage>((resolve) => {
    arrived = resolve;
  });

describe('readBody', () => {
  it('resolves with the whole body, sent in two writes', async () => {
    const body = Buffer.from(JSON.stringify({ click_id: 'clk_1', filler: 'x'.repeat(100_000) }));
    const answer = await new Promise<string>((resolve, reject) => {
      const req = request(
        { port, host: '127.0.0.1', method: 'POST', path: '/', headers: { 'content-length': body.length } },
        (res) => {
          let text = '';
          res.on('data', (c) => {
            text += c;
          });
          res.on('end', () => resolve(text));
        },
      );
      req.on('error', reject);
      req.write(body.subarray(0, 10));
      req.end(body.subarray(10));
    });
    expect(answer).toBe(`read ${body.length} bytes`);
    expect((await reads.at(-1))?.equals(body)).toBe(true);
  });

  it('rejects with invalid_request when the client goes away before the whole body came', async () => {
    const next = nextRequest();
    const socket = connect(port, '127.0.0.1');
    socket.write('POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n{"account_id":');
    await next;
    const read = reads.at(-1)!;
    socket.destroy();
    await expect(read).rejects.toMatchObject({
      code: 'invalid_request',
      message: 'the request body could not be read: request aborted',
    });
  }, 10_000);
});
