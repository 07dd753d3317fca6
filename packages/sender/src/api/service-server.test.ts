import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createServiceServer } from './service-server.js';

let servers: ReturnType<typeof createServiceServer>[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  servers = [];
});

async function start(
  limits: Parameters<typeof createServiceServer>[1],
  listener: Parameters<typeof createServiceServer>[0] = (_req, res) => res.end('ok'),
) {
  const server = createServiceServer(listener, limits);
  servers.push(server);
  // The server's side of each connection it took, to wait on its close there.
  const accepted: Socket[] = [];
  server.on('connection', (socket) => accepted.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, accepted };
}

/** A connection and everything it reads until the server closes it. */
function open(port: number, send = '') {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  let read = '';
  socket.on('data', (chunk) => {
    read += chunk;
  });
  socket.on('error', () => {});
  const connected = new Promise<void>((resolve) => socket.once('connect', resolve)).then(() => {
    if (send) socket.write(send);
  });
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(read)));
  return { socket, connected, closed };
}

const GET = 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';

describe('the service’s server', () => {
  it('answers 408 and closes a connection whose headers never end, and serves others meanwhile', async () => {
    const { port } = await start({ headersTimeoutMs: 300, checkEveryMs: 50 });
    const slow = open(port, 'POST /internal/v1/events HTTP/1.1\r\nHost: x\r\n');
    await slow.connected;
    const answered = await open(port, GET).closed;
    expect(answered).toMatch(/^HTTP\/1\.1 200/);
    expect(await slow.closed).toMatch(/^HTTP\/1\.1 408/);
  });

  it('closes connections past its cap at once, and takes new ones once others went', async () => {
    const { port, accepted } = await start({ maxConnections: 2 });
    const held = [open(port), open(port)];
    await Promise.all(held.map((h) => h.connected));
    // Past the cap: closed by the server without an answer, while the two stay open.
    expect(await open(port, GET).closed).toBe('');
    expect(held.every((h) => !h.socket.destroyed)).toBe(true);
    // The server counts a connection out when its side closes: then it takes a new one.
    const held0 = accepted.find((s) => s.remotePort === held[0]!.socket.localPort);
    expect(held0).toBeDefined();
    const serverSide = new Promise((resolve) => held0!.once('close', resolve));
    held[0]!.socket.destroy();
    await serverSide;
    expect(await open(port, GET).closed).toMatch(/^HTTP\/1\.1 200/);
  });

  it('closes a connection with nothing sent either way for its idle time', async () => {
    // An answer begun and never finished stands for a client that stopped reading: nothing moves.
    const { port } = await start({ idleTimeoutMs: 200 }, (_req, res) => {
      res.writeHead(200, { 'content-length': '10' });
      res.write('12345');
    });
    expect(await open(port, GET).closed).toMatch(/^HTTP\/1\.1 200[\s\S]*12345$/);
  });
});
