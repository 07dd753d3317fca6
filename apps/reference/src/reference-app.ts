/**
 * The reference app in one call: the sender service (management API + workers) on the embedded
 * SQLite store, a sample HTTPS receiver trusted through a CA made at start, a business account with
 * an endpoint subscribed to every event, and — if asked — generated traffic.
 *
 * It locks its database before anything else and binds both ports before it touches a file, so a
 * start that cannot go ahead leaves everything as it found it.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EVENT_NAMES } from '@linkhooks/protocol';
import {
  type AttemptReport,
  createSender,
  createSqliteStore,
  DISABLE_THRESHOLD,
  type EndpointRecord,
  RETRY_DELAYS_MS,
  type Sender,
} from '@linkhooks/sender';
import { createActivityLog } from './activity-log.js';
import { createCertificates } from './certificates.js';
import { lockDatabase } from './data-lock.js';
import { listen } from './listen.js';
import { createReferenceRoutes } from './reference-routes.js';
import { checkDatabase, keepLeftover, makeFolderOf, removeDatabase } from './run-database.js';
import { type ReceiverMode, type SampleReceiver, startSampleReceiver } from './sample-receiver.js';
import { generateTraffic, type Traffic } from './traffic.js';

export interface ReferenceOptions {
  /**
   * SQLite file, made for this run and removed when it stops. Locked while the app runs; a file
   * the app did not make is never deleted (see run-database.ts).
   */
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
  /** Called after each attempt is recorded, after the app's own log line (a test waits on it). */
  onAttempt?: (report: AttemptReport) => void;
  /** How often the verified deliveries are summed up in one line. Default 5 s. */
  summaryEveryMs?: number;
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
  /** Switches the sample receiver and says so in the log. */
  setReceiverMode(mode: ReceiverMode): void;
  sender: Sender;
  traffic: Traffic | null;
  close(): Promise<void>;
}

export async function startReferenceApp(options: ReferenceOptions): Promise<ReferenceApp> {
  const log = options.log ?? (() => {});
  const { dbFile } = options;
  const timeScale = options.timeScale ?? 1;
  const removeFolder = makeFolderOf(dbFile);
  const lock = lockDatabase(dbFile);
  let made = false;
  // Also on a crash or process.exit: the next run then finds the database free and nothing left.
  const release = () => {
    if (made) removeDatabase(dbFile);
    lock.release();
    removeFolder();
  };
  process.once('exit', release);

  let receiver: SampleReceiver | undefined;
  let server: Server | undefined;
  let store: ReturnType<typeof createSqliteStore> | undefined;
  try {
    checkDatabase(dbFile, lock);
    const certificates = await createCertificates();
    receiver = await startSampleReceiver(certificates, {
      ...(options.receiverPort !== undefined ? { port: options.receiverPort } : {}),
      ...(options.receiverMode ? { mode: options.receiverMode } : {}),
    });
    let handle: RequestListener = (_req, res) => res.writeHead(503).end();
    server = createServer((req, res) => handle(req, res));
    await listen(server, options.port ?? 0, 'service');

    const kept = keepLeftover(dbFile, lock);
    if (kept)
      log(`reference: ${dbFile} was left by a run (pid ${lock.leftBy}) that was killed; kept as ${kept}`);
    made = true;
    store = createSqliteStore({ filename: dbFile });
    await store.migrate();
    const sender = createSender({
      store,
      ca: certificates.ca, // trust the sample receiver's CA, as NODE_EXTRA_CA_CERTS would
      allowPrivateNetworks: true, // the receiver is on this machine (development switch)
      // Secrets encrypted at rest as in the service (design D29); the database lives for one run,
      // so a key for this run alone.
      masterKey: randomBytes(32).toString('base64'),
      timeScale,
      onAttempt: (report) => {
        activity.attempt(report);
        options.onAttempt?.(report);
      },
    });
    const activity = createActivityLog({
      log,
      maxAttempts: RETRY_DELAYS_MS.length + 1,
      disableAfter: DISABLE_THRESHOLD,
      scheduleMs: RETRY_DELAYS_MS.reduce((sum, ms) => sum + ms, 0) * timeScale,
      ...(options.summaryEveryMs ? { summaryEveryMs: options.summaryEveryMs } : {}),
    });
    const sampleReceiver = receiver;
    sampleReceiver.onEvent = (received) => activity.verified(received);

    const { account, apiKey } = await sender.createAccount({ name: 'Reference Co', plan: 'business' });
    const endpoint = await sender.createEndpoint(account.id, {
      url: receiver.url,
      events: [...EVENT_NAMES],
      description: 'the sample receiver',
    });
    // Each endpoint's secret, and its previous one through a rotation's grace: the sender signs
    // X-Service-Signature with the previous one until the grace ends, as a receiver must expect.
    receiver.useSecrets(async () =>
      (await sender.listEndpoints(account.id)).flatMap((e) =>
        e.previousSecret !== null && (e.previousSecretExpiresAt ?? 0) > Date.now()
          ? [e.secret, e.previousSecret]
          : [e.secret],
      ),
    );

    const setReceiverMode = (mode: ReceiverMode) => {
      sampleReceiver.setMode(mode);
      activity.modeChanged(mode);
    };
    handle = createReferenceRoutes({ sender, receiver, setReceiverMode, serviceToken: options.serviceToken });
    const serviceUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    sender.start();
    const traffic = options.rate ? generateTraffic(sender, account.id, options.rate) : null;
    const httpServer = server;
    const openStore = store;

    return {
      ca: certificates.ca,
      serviceUrl,
      dashboardUrl: `${serviceUrl}/dashboard`,
      apiKey,
      accountId: account.id,
      endpoint,
      receiver,
      setReceiverMode,
      sender,
      traffic,
      async close() {
        traffic?.stop();
        await closeServer(httpServer);
        await sender.stop(1_000);
        activity.stop();
        await sampleReceiver.close();
        await openStore.close();
        release();
        process.off('exit', release);
      },
    };
  } catch (error) {
    if (server?.listening) await closeServer(server);
    await receiver?.close();
    await store?.close().catch(() => {});
    release();
    process.off('exit', release);
    throw error;
  }
}

function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}
