/**
 * The reference app in one call: the sender service (management API + workers) on the embedded
 * SQLite store, a sample HTTPS receiver trusted through a CA made at start, a business account with
 * an endpoint subscribed to every event, and — if asked — generated traffic.
 */
import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EVENT_NAMES } from '@linkhooks/protocol';
import { createSender, createSqliteStore, type EndpointRecord, type Sender } from '@linkhooks/sender';
import { createServiceApp } from '@linkhooks/sender/api';
import express from 'express';
import { createCertificates } from './certificates.js';
import {
  RECEIVER_MODES,
  type ReceiverMode,
  type SampleReceiver,
  startSampleReceiver,
} from './sample-receiver.js';
import { generateTraffic, type Traffic } from './traffic.js';

export interface ReferenceOptions {
  /** SQLite file; deleted at start so every run begins clean. */
  dbFile: string;
  port?: number;
  receiverPort?: number;
  /** Multiplies the retry delays: 0.001 runs the whole schedule in ~38 s. */
  timeScale?: number;
  /** Events per second; 0 for none. */
  rate?: number;
  receiverMode?: ReceiverMode;
  serviceToken?: string;
  log?: (line: string) => void;
}

export interface ReferenceApp {
  /** PEM of the CA that signed the sample receiver's certificate (the sender trusts it). */
  ca: string;
  serviceUrl: string;
  dashboardUrl: string;
  apiKey: string;
  accountId: string;
  endpoint: EndpointRecord;
  receiver: SampleReceiver;
  sender: Sender;
  traffic: Traffic | null;
  close(): Promise<void>;
}

export async function startReferenceApp(options: ReferenceOptions): Promise<ReferenceApp> {
  const log = options.log ?? (() => {});
  const certificates = await createCertificates();
  const receiver = await startSampleReceiver(certificates, {
    ...(options.receiverPort !== undefined ? { port: options.receiverPort } : {}),
    ...(options.receiverMode ? { mode: options.receiverMode } : {}),
  });
  receiver.onEvent = ({ event, attempt }) =>
    log(`receiver: verified ${event.event}${attempt && attempt > 1 ? ` (attempt ${attempt})` : ''}`);

  for (const suffix of ['', '-wal', '-shm']) rmSync(options.dbFile + suffix, { force: true });
  const store = createSqliteStore({ filename: options.dbFile });
  await store.migrate();
  const sender = createSender({
    store,
    ca: certificates.ca, // trust the sample receiver's CA, as NODE_EXTRA_CA_CERTS would
    allowPrivateNetworks: true, // the receiver is on this machine (development switch)
    timeScale: options.timeScale ?? 1,
    onEndpointDisabled: (endpoint) =>
      log(`sender: endpoint ${endpoint.id} disabled after 10 failed deliveries`),
  });

  const { account, apiKey } = await sender.createAccount({ name: 'Reference Co', plan: 'business' });
  const endpoint = await sender.createEndpoint(account.id, {
    url: receiver.url,
    events: [...EVENT_NAMES],
    description: 'the sample receiver',
  });
  receiver.useSecrets(async () => (await sender.listEndpoints(account.id)).map((e) => e.secret));

  const app = express();
  // The switches of the sample receiver, for the command line's keys and the dashboard.
  app.get('/reference/receiver', (_req, res) => {
    res.json({
      url: receiver.url,
      mode: receiver.mode,
      modes: RECEIVER_MODES,
      received: receiver.received.length,
    });
  });
  app.post('/reference/receiver', express.json(), (req, res) => {
    const mode = (req.body as { mode?: unknown } | undefined)?.mode;
    if (!RECEIVER_MODES.includes(mode as ReceiverMode)) {
      const message = `mode must be one of: ${RECEIVER_MODES.join(', ')}`;
      res.status(400).json({ error: { code: 'invalid_request', message } });
      return;
    }
    receiver.setMode(mode as ReceiverMode);
    log(`receiver: switched to ${mode}`);
    res.json({ mode });
  });
  app.use(
    createServiceApp({ sender, ...(options.serviceToken ? { serviceToken: options.serviceToken } : {}) }),
  );

  const server: Server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const serviceUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  sender.start();
  const traffic = options.rate ? generateTraffic(sender, account.id, options.rate) : null;

  return {
    ca: certificates.ca,
    serviceUrl,
    dashboardUrl: `${serviceUrl}/dashboard`,
    apiKey,
    accountId: account.id,
    endpoint,
    receiver,
    sender,
    traffic,
    async close() {
      traffic?.stop();
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await sender.stop(1_000);
      await receiver.close();
      await store.close();
    },
  };
}
