/**
 * A real HTTPS receiver that keeps each request's raw bytes and headers and answers as the test
 * says: what a receiver using another verification library, or one asking the sender to slow
 * down or go away, does. It serves a certificate of the test CA.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createTestCertificates, type TestCertificates } from './test-ca.mjs';

export interface RawRequest {
  /** The path's last segment: the route the endpoint points at. */
  route: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface RawAnswer {
  status: number;
  headers?: Record<string, string>;
  /** The body; by default a small JSON one. */
  body?: string;
  /** Answered this long after the request came in (a slow receiver); at once by default. */
  delayMs?: number;
}

/** `null`: the request is never answered (a receiver that hangs; the sender's deadline ends it). */
export type Answerer = (request: RawRequest) => RawAnswer | null;

export interface RawReceiver {
  origin: string;
  certs: TestCertificates;
  /** Every request, in arrival order, with the answer it got (null: left unanswered). */
  requests: (RawRequest & { answer: RawAnswer | null })[];
  /** The TLS connections it has accepted. */
  readonly connections: number;
  /** `https://localhost:<port>/hooks/<route>`, answered by `answer` (200 unless given). */
  route(name: string, answer?: Answerer): string;
  /** Resolves once `predicate` holds, checked as each request arrives (no polling). */
  until(predicate: () => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** The headers as a plain record of strings, as verification libraries take them. */
export function headerRecord(headers: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).flatMap(([k, v]) => (typeof v === 'string' ? [[k, v]] : [])),
  );
}

/**
 * @example
 * const receiver = await startRawReceiver();
 * const url = receiver.route('a', () => ({ status: 429, headers: { 'retry-after': '600' } }));
 */
export async function startRawReceiver(
  certs: TestCertificates = createTestCertificates(),
): Promise<RawReceiver> {
  const answers = new Map<string, Answerer>();
  const requests: RawReceiver['requests'] = [];
  const waiters = new Set<() => void>();
  const server: Server = createServer({ key: certs.key, cert: certs.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const route = (req.url ?? '').split('/').pop() ?? '';
      const request: RawRequest = { route, headers: req.headers, body: Buffer.concat(chunks) };
      const answer = (answers.get(route) ?? ((): RawAnswer => ({ status: 200 })))(request);
      requests.push({ ...request, answer });
      for (const waiter of waiters) waiter();
      if (answer === null) return;
      const write = () => {
        res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
        res.end(answer.body ?? (answer.status < 300 ? '{"received":true}' : '{"error":"refused"}'));
      };
      if (answer.delayMs) setTimeout(write, answer.delayMs);
      else write();
    });
  });
  let connections = 0;
  server.on('secureConnection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `https://localhost:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    certs,
    requests,
    get connections() {
      return connections;
    },
    route(name, answer) {
      if (answer) answers.set(name, answer);
      return `${origin}/hooks/${name}`;
    },
    until(predicate, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate()) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`the receiver did not see what was awaited within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
