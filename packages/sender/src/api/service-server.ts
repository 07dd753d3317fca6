/**
 * The HTTP server `serve` and `worker --port` listen with: node:http with limits on what a client
 * that never finishes its request may hold. With Node's defaults (a minute for the headers, five
 * for the request, checked every 30 s, no cap on connections), clients sending a header line now
 * and then held about 20,000 connections, the process's every file descriptor, and the health
 * check, the ingest and the delivery thread's own connections failed until they went.
 */
import { createServer, type RequestListener, type Server } from 'node:http';

export interface ServerLimits {
  /** The request's headers, from its first byte. Default 10 s. */
  headersTimeoutMs?: number;
  /** The whole request, its body included (a batch of 8 MiB on a slow link). Default 60 s. */
  requestTimeoutMs?: number;
  /** How often those are checked. Default 1 s. */
  checkEveryMs?: number;
  /** Connections open at once; past it a new one is closed at once. Default 10,000. */
  maxConnections?: number;
  /**
   * A connection with no bytes either way this long is closed: a client that asks and never reads
   * the answer held its connection for good. Default 2 min (an answer's time included).
   */
  idleTimeoutMs?: number;
}

export const SERVER_LIMITS: Required<ServerLimits> = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  checkEveryMs: 1_000,
  maxConnections: 10_000,
  idleTimeoutMs: 120_000,
};

export function createServiceServer(listener: RequestListener, limits: ServerLimits = {}): Server {
  const l = { ...SERVER_LIMITS, ...limits };
  const server = createServer(
    {
      headersTimeout: l.headersTimeoutMs,
      requestTimeout: l.requestTimeoutMs,
      connectionsCheckingInterval: l.checkEveryMs,
    },
    listener,
  );
  server.maxConnections = l.maxConnections;
  server.timeout = l.idleTimeoutMs;
  return server;
}
