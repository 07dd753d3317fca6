/**
 * The sample receiver: Express + @linkhooks/receiver over HTTPS, as a customer would write it. It
 * logs each verified event, and can be switched to misbehave so retries and disabling can be seen:
 * answer 500, hang (no answer: the sender's 30 s time-out), or verify against a wrong secret (401).
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { EVENT_NAMES } from '@linkhooks/protocol';
import type { WebhookEvent } from '@linkhooks/receiver';
import { webhookMiddleware } from '@linkhooks/receiver/express';
import express from 'express';
import type { Certificates } from './certificates.js';
import { listen } from './listen.js';

export const RECEIVER_MODES = ['ok', 'fail', 'hang', 'wrong-secret'] as const;
export type ReceiverMode = (typeof RECEIVER_MODES)[number];

export interface ReceivedEvent {
  event: WebhookEvent;
  deliveryId: string | undefined;
  attempt: number | undefined;
  at: number;
}

export interface SampleReceiver {
  url: string;
  mode: ReceiverMode;
  setMode(mode: ReceiverMode): void;
  /**
   * Where verification gets the secrets of the account's endpoints: asked on every delivery, so a
   * new endpoint or a rotation from the dashboard or the API is picked up at once.
   */
  useSecrets(lookup: () => Promise<string[]>): void;
  received: ReceivedEvent[];
  /** Requests that reached the server, whatever their fate. */
  hits: number;
  onEvent?: (received: ReceivedEvent) => void;
  close(): Promise<void>;
}

export async function startSampleReceiver(
  certificates: Certificates,
  options: { port?: number; mode?: ReceiverMode } = {},
): Promise<SampleReceiver> {
  const received: ReceivedEvent[] = [];
  const record = (
    event: WebhookEvent,
    ctx: { deliveryId?: string | undefined; attempt?: number | undefined },
  ) => {
    const entry = { event, deliveryId: ctx.deliveryId, attempt: ctx.attempt, at: Date.now() };
    received.push(entry);
    receiver.onEvent?.(entry);
  };
  const on = Object.fromEntries(EVENT_NAMES.map((name) => [name, record]));
  let lookup: (() => Promise<string[]>) | undefined;
  let current: { key: string; middleware: ReturnType<typeof webhookMiddleware> } | undefined;
  const verify = async (req: express.Request, res: express.Response, next: express.NextFunction) => {
    if (!lookup) {
      res.status(503).json({ error: 'the sample receiver has no secret yet' });
      return;
    }
    // Every endpoint of the account may point here (the dashboard creates more): accept each one's
    // secret, as a receiver does during a rotation.
    const secrets = await lookup();
    const key = secrets.join(' ');
    if (current?.key !== key) current = { key, middleware: webhookMiddleware({ secret: secrets, on }) };
    current.middleware(req, res, next);
  };
  const wrongSecret = webhookMiddleware({
    secret: 'whsec_this_is_deliberately_not_the_secret',
    on,
    onError: () => {},
  });
  const hanging = new Set<express.Response>();

  const app = express();
  // Any path under /webhooks/, so endpoints made from the dashboard can point here too.
  app.post(/^\/webhooks\/[\w.-]+$/, (req, res, next) => {
    receiver.hits++;
    switch (receiver.mode) {
      case 'fail':
        res.status(500).json({ error: 'the sample receiver is switched to fail' });
        return;
      case 'hang':
        hanging.add(res); // never answered: the sender gives up after its time-out
        res.on('close', () => hanging.delete(res));
        return;
      case 'wrong-secret':
        wrongSecret(req, res, next);
        return;
      default:
        verify(req, res, next).catch(next);
    }
  });

  const server: Server = createServer({ key: certificates.key, cert: certificates.cert }, app);
  await listen(server, options.port ?? 0, 'receiver');
  const { port } = server.address() as AddressInfo;

  const receiver: SampleReceiver = {
    url: `https://localhost:${port}/webhooks/linkhooks`,
    mode: options.mode ?? 'ok',
    setMode(mode) {
      receiver.mode = mode;
    },
    useSecrets(find) {
      lookup = find;
    },
    received,
    hits: 0,
    close: () =>
      new Promise((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}
