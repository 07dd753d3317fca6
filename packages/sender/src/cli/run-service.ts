/**
 * `serve` (management API + workers) and `worker` (workers only, for more machines): both stop
 * gracefully on SIGTERM or SIGINT — stop accepting, stop claiming, finish or release the attempts
 * in flight, close the database — then exit 0.
 */
import type { RequestListener, Server } from 'node:http';
import pino, { type Logger } from 'pino';
import { PORTAL_PATH } from '../api/portal.js';
import { createServiceListener } from '../api/service-app.js';
import { createServiceServer } from '../api/service-server.js';
import { createWorkerListener } from '../api/worker-listener.js';
import { createSender, type Sender } from '../engine/sender.js';
import { SenderError } from '../errors.js';
import { redaction } from '../log-redaction.js';
import type { SenderStore } from '../store/port.js';
import { apiLimitsOf, quotasOf, workerLimitsOf, workerSlotsOf } from './limits-env.js';
import { ListenError } from './listen-error.js';
import type { MasterKeys } from './master-keys.js';
import { maskDb } from './open-store.js';
import type { EngineSettings, HttpSettings } from './options.js';

type Env = Record<string, string | undefined>;

/** pino's levels, the most severe first, and `silent`. */
const LOG_LEVELS = [
  ...Object.entries(pino.levels.values)
    .sort(([, a], [, b]) => b - a)
    .map(([name]) => name),
  'silent',
];

export function createLogger(env: Env): Logger {
  const level = env.LINKHOOKS_LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(level)) {
    throw new SenderError('invalid_option', `LINKHOOKS_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  }
  return pino({
    level,
    base: { service: 'linkhooks-sender' },
    // Secrets and request headers never reach a log line, even if a caller logs a record whole.
    redact: redaction,
  });
}

/**
 * The engine of `serve` and `worker`, with every endpoint secret sealed under the current master
 * key before any is used (design D29, D30): plaintext ones encrypted, ones under a previous key
 * encrypted again. Counts and endpoint ids are logged, never values.
 */
export async function createEngine(
  store: SenderStore,
  settings: EngineSettings,
  keys: MasterKeys,
  env: Env,
  logger: Logger,
): Promise<Sender> {
  let sender: Sender | undefined;
  try {
    sender = makeEngine(store, settings, keys, env, logger);
    const { sealed, resealed, unreadable } = await sender.sealSecrets();
    if (sealed + resealed > 0)
      logger.info({ sealed, resealed }, 'endpoint secrets encrypted under the current master key');
    if (unreadable.length > 0) {
      logger.error(
        { endpoints: unreadable.slice(0, 20), count: unreadable.length },
        'endpoint secrets no configured master key opens: their deliveries wait until the key they were encrypted with is given',
      );
    } else if (keys.previousMasterKeys.length > 0) {
      // Neutral on which key is newer: mid-rotation the accepted key may be the new one (runbook).
      logger.info(
        'every endpoint secret is under this process’s master key (LINKHOOKS_MASTER_KEY); LINKHOOKS_PREVIOUS_MASTER_KEY can be removed only once every process seals with this same key',
      );
    }
    return sender;
  } catch (error) {
    await sender?.stop(0);
    await store.close(); // a bad setting must not leave a database pool holding the process open
    throw error;
  }
}

const DAY_MS = 24 * 60 * 60 * 1000;
const PRUNE_EVERY_MS = 60 * 60 * 1000;

function retentionMs(env: Env): number {
  const raw = env.LINKHOOKS_RETENTION_DAYS ?? '30';
  const days = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || !(days > 0)) {
    throw new SenderError('invalid_option', 'LINKHOOKS_RETENTION_DAYS must be a number of days above 0');
  }
  return days * DAY_MS;
}

/** Deletes final deliveries past retention every hour (and once at start); never holds the process open. */
function pruneRegularly(sender: Sender, logger: Logger): () => void {
  const prune = () =>
    sender.pruneLog().then(
      (deleted) => deleted > 0 && logger.info({ deleted }, 'pruned the delivery log'),
      (error: unknown) => logger.error({ err: error }, 'pruning the delivery log failed'),
    );
  void prune();
  const timer = setInterval(prune, PRUNE_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}

function makeEngine(
  store: SenderStore,
  settings: EngineSettings,
  keys: MasterKeys,
  env: Env,
  logger: Logger,
): Sender {
  return createSender({
    store,
    logger,
    retentionMs: retentionMs(env),
    quotas: quotasOf(env),
    ...workerLimitsOf(env),
    ...keys,
    timeScale: settings.timeScale,
    allowPrivateNetworks: settings.allowPrivateNetworks,
    disableOnGone: settings.disableOnGone,
    ...(settings.ca ? { ca: settings.ca } : {}),
    deliveryThread: deliveryThreadFor(store),
    ...(settings.operatorNotifications ? { operatorNotifications: settings.operatorNotifications } : {}),
  });
}

/** Resolves when a stop signal arrived and everything is closed. */
function untilStopped(logger: Logger, stop: () => Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      logger.info({ signal }, 'stopping: no new work; finishing attempts in flight');
      stop().then(resolve, reject);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

export async function serve(
  store: SenderStore,
  options: {
    db: string;
    port: number;
    host: string;
    engine: EngineSettings;
    http: HttpSettings;
    keys: MasterKeys;
  },
  env: Env,
  logger: Logger,
): Promise<void> {
  const sender = await createEngine(store, options.engine, options.keys, env, logger);
  const listener = createServiceListener({
    sender,
    ...(env.LINKHOOKS_SERVICE_TOKEN ? { serviceToken: env.LINKHOOKS_SERVICE_TOKEN } : {}),
    ...(env.LINKHOOKS_METRICS_TOKEN ? { metricsToken: env.LINKHOOKS_METRICS_TOKEN } : {}),
    ...apiLimitsOf(env),
    ...options.http,
    logger,
  });
  const { server, base } = await listenOrClose(listener, options, sender, store);
  // Once listening: a start that cannot listen has no prune running into its closed store.
  const stopPruning = pruneRegularly(sender, logger);
  sender.start();
  logger.info(
    {
      url: base,
      api: `${base}/v1`,
      ingest: `${base}/internal/v1/events`,
      dashboard: `${base}/dashboard`,
      portalLinks: `${options.http.publicUrl ?? base}${PORTAL_PATH}`,
      metrics: `${base}/metrics`,
      ingestEnabled: Boolean(env.LINKHOOKS_SERVICE_TOKEN),
      ...options.http,
      ...loggedSettings(options.engine, store, options.db),
      slots: workerSlotsOf(env),
    },
    'linkhooks-sender serving the management API and delivering',
  );
  if (!env.LINKHOOKS_SERVICE_TOKEN)
    logger.warn('LINKHOOKS_SERVICE_TOKEN is not set: POST /internal/v1/events answers 503');
  await untilStopped(logger, () => stopService(stopPruning, server, sender, store, logger));
}

export async function work(
  store: SenderStore,
  options: {
    db: string;
    engine: EngineSettings;
    keys: MasterKeys;
    listen?: { port: number; host: string };
  },
  env: Env,
  logger: Logger,
): Promise<void> {
  const sender = await createEngine(store, options.engine, options.keys, env, logger);
  let server: Server | null = null;
  let where = {};
  if (options.listen) {
    const listener = createWorkerListener({
      sender,
      ...(env.LINKHOOKS_METRICS_TOKEN ? { metricsToken: env.LINKHOOKS_METRICS_TOKEN } : {}),
      onError: (err) => logger.error({ err }, 'answering a metrics scrape failed'),
    });
    const listening = await listenOrClose(listener, options.listen, sender, store);
    server = listening.server;
    const { base } = listening;
    where = { url: base, health: `${base}/healthz`, metrics: `${base}/metrics` };
  }
  const stopPruning = pruneRegularly(sender, logger);
  sender.start();
  logger.info(
    {
      ...where,
      ...loggedSettings(options.engine, store, options.db),
      slots: workerSlotsOf(env),
    },
    'linkhooks-sender worker delivering',
  );
  await untilStopped(logger, () => stopService(stopPruning, server, sender, store, logger));
}

/** A stop: no more requests (the open ones end), the engine's attempts, then the store. */
async function stopService(
  stopPruning: () => void,
  server: Server | null,
  sender: Sender,
  store: SenderStore,
  logger: Logger,
): Promise<void> {
  stopPruning();
  const closed = server && new Promise<void>((resolve) => server.close(() => resolve()));
  server?.closeIdleConnections();
  await sender.stop();
  await closed;
  await store.close();
  logger.info('stopped');
}

/**
 * Listens with node:http directly (Express 5's app.listen hands a bind error to its callback, where
 * it is easy to mistake for success). One that cannot listen closes what was opened, or the
 * database pool would keep the process alive.
 */
async function listenOrClose(
  listener: RequestListener,
  { port, host }: { port: number; host: string },
  sender: Sender,
  store: SenderStore,
): Promise<{ server: Server; base: string }> {
  try {
    const server = await new Promise<Server>((resolve, reject) => {
      const s = createServiceServer(listener);
      s.once('error', reject);
      s.listen(port, host, () => resolve(s));
    });
    return { server, base: `http://${displayHost(host)}:${portOf(server, port)}` };
  } catch (error) {
    await sender.stop(0);
    await store.close();
    const why =
      (error as NodeJS.ErrnoException).code === 'EADDRINUSE'
        ? `port ${port} on ${host} is in use by another program: stop it, or give --port (LINKHOOKS_PORT) another port`
        : (error as Error).message;
    throw new ListenError(`cannot listen: ${why}`, { cause: error });
  }
}

/** The port a server listens on (the one the system picked for port 0). */
function portOf(server: Server, asked: number): number {
  const address = server.address();
  return typeof address === 'object' && address ? address.port : asked;
}

/** A wildcard address is not one a browser can open: show localhost instead. */
function displayHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * On SQLite the store's writes share the event loop with the requests, so the requests' TLS and
 * parsing go to a thread of their own (design D59). A PostgreSQL store's work is in the database,
 * and there the thread's hand-over measured the same or a few percent slower.
 */
const deliveryThreadFor = (store: SenderStore) => !store.capabilities.recordsOverNetwork;

/**
 * The settings worth a log line: the database (its password masked), the CA file's name, not its
 * contents; the engine's delivery thread.
 */
function loggedSettings({ ca: _ca, caFile, ...settings }: EngineSettings, store: SenderStore, db: string) {
  return {
    database: maskDb(db),
    ...settings,
    ...(caFile ? { caFile: caFile.path } : {}),
    deliveryThread: deliveryThreadFor(store),
  };
}
