/**
 * A real HTTPS receiver built on @linkhooks/receiver (Express + webhookMiddleware), one route per
 * endpoint, each with its own secret. A route's behaviour can be switched to fail in every way
 * the sender must classify: 5xx, 3xx, hang, reset; `hold` parks requests until the route's
 * behaviour changes, then answers those whose client is still there. It serves a certificate of the test CA, which
 * the sender trusts through `receiver.certs.ca`.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { DeliveryContext, WebhookEvent } from '@linkhooks/receiver';
import { webhookMiddleware } from '@linkhooks/receiver/express';
import express from 'express';
import { createTestCertificates, type TestCertificates } from './test-ca.mjs';

export type Behaviour =
  | 'ok'
  | 'slow'
  | 'status500'
  | 'gone'
  | 'redirect'
  | 'hang'
  | 'hold'
  | 'reset'
  | 'wrong-secret';

export interface Received {
  route: string;
  event: WebhookEvent;
  rawBody: string;
  eventId: string | undefined;
  deliveryId: string | undefined;
  attempt: number | undefined;
}

export interface HttpsReceiver {
  /** `https://localhost:<port>`. */
  origin: string;
  port: number;
  /** The certificates it serves; a sender trusts it with `ca: certs.ca`. */
  certs: TestCertificates;
  /** Every verified delivery, in arrival order. */
  received: Received[];
  /** Every request that reached the server, verified or not. */
  hits: { route: string; headers: Record<string, string | string[] | undefined> }[];
  /** The most requests each route had open at once. */
  peak: Map<string, number>;
  /** Verifies deliveries to `/hooks/<name>` with `secret`; returns that URL. */
  route(name: string, secret: string): string;
  behave(name: string, behaviour: Behaviour): void;
  /** Resolves once `predicate` holds, re-checked on every request and delivery (no polling). */
  until(predicate: () => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the receiver on a loopback port, with a fresh test CA unless given one.
 *
 * @example
 * const receiver = await startHttpsReceiver();
 * const { sender } = makeSender(receiver.certs);
 * const { route } = await addEndpoint(sender, receiver, { events: ['click'] });
 * receiver.behave(route, 'status500');
 */
export async function startHttpsReceiver(
  certs: TestCertificates = createTestCertificates(),
): Promise<HttpsReceiver> {
  const app = express();
  const received: Received[] = [];
  const hits: HttpsReceiver['hits'] = [];
  const behaviours = new Map<string, Behaviour>();
  const handlers = new Map<string, ReturnType<typeof webhookMiddleware>>();
  const waiters = new Set<() => void>();
  const open = new Map<string, number>();
  const peak = new Map<string, number>();
  const parked = new Map<string, Array<() => void>>();
  const wrong = webhookMiddleware({ secret: 'whsec_not_the_endpoint_secret', onError: () => {} });

  app.post('/redirected', (_req, res) => void res.status(200).json({ redirected: true }));
  app.post('/hooks/:name', (req, res, next) => {
    const name = req.params.name;
    hits.push({ route: name, headers: req.headers });
    open.set(name, (open.get(name) ?? 0) + 1);
    peak.set(name, Math.max(peak.get(name) ?? 0, open.get(name)!));
    res.once('close', () => open.set(name, open.get(name)! - 1));
    for (const check of waiters) check();
    const behaviour = behaviours.get(name) ?? 'ok';
    if (behaviour === 'status500') return void res.status(500).json({ error: 'receiver is down' });
    if (behaviour === 'gone') return void res.status(410).json({ error: 'this hook is gone' });
    if (behaviour === 'redirect') return void res.redirect(307, '/redirected');
    if (behaviour === 'hang') return; // never answers
    if (behaviour === 'hold') {
      const list = parked.get(name) ?? [];
      list.push(() => {
        if (!req.socket.destroyed) handlers.get(name)?.(req, res, next);
      });
      return void parked.set(name, list);
    }
    if (behaviour === 'reset') return void req.socket.destroy();
    if (behaviour === 'wrong-secret') return wrong(req, res, next);
    const handler = handlers.get(name);
    if (!handler) return void res.status(404).end();
    // A receiver that takes a few milliseconds per delivery, so that requests overlap.
    if (behaviour === 'slow') return void setTimeout(() => handler(req, res, next), 3);
    return handler(req, res, next);
  });

  const server: Server = createServer({ key: certs.key, cert: certs.cert }, app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `https://localhost:${port}`;

  return {
    origin,
    port,
    certs,
    received,
    hits,
    peak,
    route(name, secret) {
      handlers.set(
        name,
        webhookMiddleware({
          secret,
          on: {
            click: record,
            conversion: record,
            'link.created': record,
            'link.updated': record,
            'link.deleted': record,
            'alert.triggered': record,
          },
        }),
      );
      function record(event: WebhookEvent, ctx: DeliveryContext) {
        received.push({
          route: name,
          event,
          rawBody: Buffer.from(ctx.rawBody).toString('utf8'),
          eventId: ctx.eventId,
          deliveryId: ctx.deliveryId,
          attempt: ctx.attempt,
        });
        for (const check of waiters) check();
      }
      return `${origin}/hooks/${name}`;
    },
    behave(name, behaviour) {
      behaviours.set(name, behaviour);
      if (behaviour !== 'hold') {
        for (const release of parked.get(name) ?? []) release();
        parked.delete(name);
      }
    },
    until(predicate, timeoutMs = 120_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(`receiver: condition not met within ${timeoutMs} ms (${received.length} received)`),
          );
        }, timeoutMs);
        function check() {
          if (!predicate()) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        }
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
