/**
 * `createSender`: the engine the platform runs, and the only door to its store. It validates and
 * fans out events, stores them durably before `publish` returns, delivers through workers on the
 * retry schedule, disables endpoints that keep failing, and keeps the delivery log. The management
 * API and the service CLI call its methods, never the store.
 */
import { isEventName, sampleEventData } from '@linkhooks/protocol';
import pino, { type Logger } from 'pino';
import { authenticateApiKey, createAccount, findKeyHolder } from '../accounts.js';
import { systemClock } from '../clock.js';
import type { AddressPolicy } from '../delivery/address-guard.js';
import { createDeliveryClient, longestRequestMs } from '../delivery/http-client.js';
import { connectionsAt } from '../delivery/origin-requests.js';
import { createThreadedDeliveryClient } from '../delivery/threaded-client.js';
import { newId } from '../domain/ids.js';
import { isPageCursor, pageCursorProblem } from '../domain/page-cursor.js';
import { NOTHING_MOVED } from '../domain/queue-moves.js';
import { isSenderError, SenderError } from '../errors.js';
import { poolShare } from '../limits/pool-shares.js';
import { createReadTurns, READS_AT_ONCE } from '../limits/read-turns.js';
import { redaction } from '../log-redaction.js';
import { countInFlight, createMetrics } from '../metrics.js';
import { withSecretCipher } from '../store/encrypted-secrets.js';
import type { Published, PublishTarget } from '../store/port.js';
import { STEPS_AT_ONCE_OVER_NETWORK, stepTurns } from '../store/step-turns.js';
import { endSpanFailed, publishedAttributes, SPAN, startSpan } from '../tracing.js';
import { startBudgetFor } from '../turn-budget.js';
import { createWorker } from '../worker/worker.js';
import { accountAdministration } from './account-admin.js';
import { endpointDeletion } from './endpoint-deletion.js';
import { endpointManagement } from './endpoint-management.js';
import { endpointOperations } from './endpoint-operations.js';
import { endpointStatsOperations } from './endpoint-stats.js';
import { buildEvent, type PublishInput } from './event-input.js';
import { observeAttempts, observeBreakers, runHook } from './observe-attempts.js';
import { createOperatorNotifier } from './operator-notifier.js';
import { type SenderOptions, settingsOf } from './options.js';
import { portalSessions } from './portal-sessions.js';
import { type PublishResult, publishEach } from './publish-many.js';
import { queueSettling } from './queue-settling.js';
import { createQuotaGuard } from './quotas.js';
import { sealSecrets } from './seal-secrets.js';
import { secretCipherOf } from './secrets-at-rest.js';

export type { AccountAdministration, ApiKey, RotatedKey } from './account-admin.js';
export type { RotateOptions } from './endpoint-secrets.js';
export type { PortalOpened, PortalRefusal, PortalSession } from './portal-sessions.js';
export type { NewEndpointInput, Sender } from './sender-interface.js';

import type { Sender } from './sender-interface.js';

export type { EndpointOperations, Recovered, RecoverInput } from './endpoint-operations.js';
export type { PublishInput } from './event-input.js';
export type { OperatorNotifications } from './operator-options.js';
export type { SenderOptions } from './options.js';
export type { Quotas } from './quotas.js';
export type { SealReport } from './seal-secrets.js';

export const USER_AGENT = 'linkhooks/0.0.0';

export type { PublishItem, PublishManyResult, PublishResult } from './publish-many.js';

export function createSender(options: SenderOptions): Sender {
  const settings = settingsOf(options);
  const logger: Logger = options.logger ?? pino({ enabled: false, redact: redaction });
  const cipher = secretCipherOf(options, logger);
  const store = withSecretCipher(options.store, cipher, (delivery, err) =>
    logger.error({ delivery, err }, 'a delivery is held back: its endpoint secret cannot be opened'),
  );
  const clock = options.clock ?? systemClock;
  const addressPolicy: AddressPolicy = { allowPrivateNetworks: options.allowPrivateNetworks ?? false };
  const clientOptions = {
    timeoutMs: settings.timeoutMs,
    // Requests beyond them wait for a socket within the attempt's deadline (design D25).
    connectionsPerOrigin: connectionsAt(settings.perOriginCap),
    allowPrivateNetworks: addressPolicy.allowPrivateNetworks,
    ...(options.ca ? { ca: options.ca } : {}),
  };
  // Requests sent from a thread of their own: not where a client is given, which sends from wherever it does.
  const threaded = settings.deliveryThread && !options.client;
  const client =
    options.client ??
    (threaded
      ? createThreadedDeliveryClient({
          ...clientOptions,
          onThreadError: (err) =>
            logger.error(
              { err },
              'the delivery thread stopped; its requests are retried, a new thread takes the next',
            ),
        })
      : createDeliveryClient({ ...clientOptions, ...(options.resolve ? { resolve: options.resolve } : {}) }));
  const metrics = createMetrics(store);
  // The operator URL is the platform's: private addresses allowed, the metadata ones never (design D50).
  const operatorClient = settings.operator
    ? (options.client ??
      createDeliveryClient({
        timeoutMs: settings.timeoutMs,
        connectionsPerOrigin: 2,
        allowPrivateNetworks: true,
        ...(options.ca ? { ca: options.ca } : {}),
        ...(options.resolve ? { resolve: options.resolve } : {}),
      }))
    : null;
  const notifier =
    settings.operator && operatorClient
      ? createOperatorNotifier({
          outbox: store,
          client: operatorClient,
          clock,
          settings: settings.operator,
          schedule: settings.rules.schedule,
          leaseMs: longestRequestMs(settings.timeoutMs) + settings.leaseMs,
          pollIntervalMs: settings.pollIntervalMs,
          userAgent: USER_AGENT,
          logger,
        })
      : null;
  const quota = createQuotaGuard(settings.quotas, clock);
  // The engine's moves and endpoint deletions a few steps at a time, however many run (design D83):
  // one on SQLite, whose steps run on the event loop; over a network, a share of the pool.
  const turns = stepTurns(
    store.capabilities.recordsOverNetwork
      ? poolShare(store.capabilities.connections, STEPS_AT_ONCE_OVER_NETWORK, 2)
      : 1,
  );
  const deletion = endpointDeletion({ store, clock, logger, turns });
  // Reads that cost what an account's log holds, in turns by account, a share of the pool (design
  // D82): the statistics' windows, and apart from them the log's searches, so that a search of one
  // event never waits behind a month of attempts.
  const readsAtOnce = poolShare(store.capabilities.connections, READS_AT_ONCE, 1);
  const statistics = createReadTurns('statistics requests', readsAtOnce);
  const searches = createReadTurns('log searches', readsAtOnce);
  const settling = queueSettling({ store, clock, logger, wake: () => worker.wake(), turns });

  const onAttemptHook = options.onAttempt;
  const worker = createWorker({
    queue: store,
    client,
    clock,
    rules: settings.rules,
    userAgent: USER_AGENT,
    turnBudget: startBudgetFor(threaded),
    concurrency: settings.concurrency,
    perEndpointCap: settings.perEndpointCap,
    perAccountCap: settings.perAccountCap,
    perOriginCap: settings.perOriginCap,
    perAccountAtOriginCap: settings.perAccountAtOriginCap,
    batchSize: settings.batchSize,
    leaseMs: settings.leaseMs,
    renewEveryMs: settings.renewEveryMs,
    pollIntervalMs: settings.pollIntervalMs,
    // A record a network round trip away would hold the slot idle; in-process records are batched
    // better when slots free at the record.
    freeSlotOnResponse: store.capabilities.recordsOverNetwork,
    onAttempt: observeAttempts({
      metrics,
      logger,
      onEndpointDisabled: options.onEndpointDisabled,
      onAttempt: (report) => {
        if (!report.unsent) {
          if (report.applied.noticed) notifier?.wake();
          if (report.applied.disabledEndpoint) settling.inBackground(report.applied.disabledEndpoint);
        }
        // No hook, no closure: this runs for every attempt.
        if (onAttemptHook) runHook(logger, 'onAttempt', () => onAttemptHook(report));
      },
    }),
    onBreaker: observeBreakers({ metrics, logger }),
    onError: (error) => logger.error({ err: error }, 'worker error'),
  });
  countInFlight(metrics, () => worker.inFlight);
  const unsubscribe = store.subscribe?.(() => worker.wake());

  const notFound = (what: string, id: string) => new SenderError('not_found', `no ${what} ${id}`);
  const found = <T>(value: T | null, what: string, id: string): T => {
    if (value === null) throw notFound(what, id);
    return value;
  };

  /**
   * The first failure that stopped the store making published events durable (design D33: a disk
   * sync that failed refuses every publish until the process restarts), logged once: `/healthz`
   * reports it, so that a supervisor restarts the service.
   */
  let storageFailure: SenderError | null = null;
  function storageFailed(error: SenderError) {
    if (storageFailure) return;
    storageFailure = error;
    logger.error({ err: error }, 'published events can no longer be made durable; restart the service');
  }

  /** A publish within the account's event rate (publishTo gives the token back when nothing is stored). */
  function publishCounted(accountId: string, input: PublishInput): Promise<PublishResult> {
    try {
      quota.event(accountId);
    } catch (error) {
      return Promise.reject(error);
    }
    return publishTo(accountId, input, {}, true);
  }

  /**
   * Every publish, in a span of its own (design D46): the ingest request's child when there is one.
   * `counted`: the publish took a token of the account's event rate, given back when the event is
   * refused as invalid or is a repeat that stored nothing (a test send takes none).
   *
   * Not an async function, and no closure keeps the input: once its event is built, what waits for
   * the commit is the event and promises with their handlers (design D61, D62). Whatever throws on
   * the way, a store's call included, answers as a rejection, with the span ended failed.
   */
  function publishTo(
    accountId: string,
    input: PublishInput,
    target: PublishTarget,
    counted: boolean,
  ): Promise<PublishResult> {
    const span = startSpan(SPAN.publish, { 'linkhooks.account.id': accountId });
    const failed = (error: unknown): Promise<never> => {
      if (isSenderError(error)) {
        if (counted && error.status < 500) quota.refundEvent(accountId);
        if (error.code === 'storage_failed') storageFailed(error);
      }
      endSpanFailed(span, error);
      return Promise.reject(error);
    };
    let stored: Promise<Published>;
    let name: string;
    try {
      const event = buildEvent(accountId, input, clock.now());
      name = event.name;
      stored = store.publish(event, () => newId('dlv', event.createdAt), target);
    } catch (error) {
      return failed(error);
    }
    return stored.then((published) => {
      try {
        metrics.events.inc({ outcome: published.duplicate ? 'duplicate' : 'stored' });
        if (published.duplicate) {
          if (counted) quota.refundEvent(accountId);
        } else if (published.deliveries.some((d) => d.status === 'pending')) worker.wake();
        publishedAttributes(span, name, published);
      } catch (error) {
        return failed(error);
      }
      span.end();
      return published.duplicate
        ? published
        : { eventId: published.eventId, deliveries: published.deliveries };
    }, failed);
  }

  const endpoints = endpointManagement({ store, clock, addressPolicy, resolve: options.resolve, quota });
  const { getEndpoint, live } = endpoints;
  const operations = endpointOperations({
    store,
    clock,
    takeRecovery: (a) => quota.recovery(a),
    wake: () => worker.wake(),
    settling,
  });

  return {
    metrics: metrics.registry,
    capabilities: store.capabilities,
    storageFailure: () => storageFailure,
    publish: (accountId, input) => publishCounted(accountId, input),
    publishMany: (items) => publishEach(items, publishCounted),

    async sendTestEvent(accountId, endpointId, event) {
      const endpoint = await getEndpoint(accountId, endpointId);
      if (!endpoint.enabled) {
        throw new SenderError('endpoint_disabled', 'the endpoint is disabled; re-enable it first');
      }
      if (endpoint.paused)
        throw new SenderError('endpoint_paused', 'the endpoint is paused; resume it first');
      const name = event ?? endpoint.events[0];
      if (!isEventName(name) || !endpoint.events.includes(name)) {
        throw new SenderError(
          'invalid_event',
          `event must be one the endpoint subscribes to: ${endpoint.events.join(', ')}`,
        );
      }
      quota.testSend(accountId);
      return publishTo(
        accountId,
        { event: name, data: sampleEventData(name) },
        { endpointId, test: true },
        false,
      );
    },

    createEndpoint: endpoints.createEndpoint,
    updateEndpoint: endpoints.updateEndpoint,
    rotateSecret: endpoints.rotateSecret,
    getEndpoint,
    listEndpoints: endpoints.listEndpoints,

    async deleteEndpoint(accountId, id) {
      if (!(await deletion.deleteEndpoint(accountId, id))) throw notFound('endpoint', id);
    },

    async reenableEndpoint(accountId, id, { replaySkipped = false } = {}) {
      const result = await store.reenableEndpoint(accountId, id, {
        replaySkipped,
        now: clock.now(),
        notices: settings.rules.notices,
      });
      worker.wake();
      if (result?.noticed) notifier?.wake();
      const { settling: left, ...reenabled } = found(result, 'endpoint', id);
      const moved = await settling.answered(
        { accountId, id },
        {
          ...NOTHING_MOVED,
          released: reenabled.resumed,
          replayed: reenabled.replayed,
          settling: left,
        },
      );
      return {
        ...reenabled,
        resumed: moved.released,
        replayed: moved.replayed,
        endpoint: live(reenabled.endpoint),
      };
    },

    async retryDelivery(accountId, deliveryId) {
      quota.retry(accountId);
      const result = await store.retryNow(accountId, deliveryId, clock.now());
      if (!result.ok) {
        if (result.reason === 'not_found') throw notFound('delivery', deliveryId);
        if (result.reason === 'endpoint_disabled') {
          throw new SenderError('endpoint_disabled', 'the endpoint is disabled; re-enable it first');
        }
        if (result.reason === 'endpoint_paused') {
          throw new SenderError('endpoint_paused', 'the endpoint is paused; resume it first');
        }
        throw new SenderError(
          'delivery_in_flight',
          'an attempt of this delivery is in flight; retry it once that attempt has finished',
        );
      }
      worker.wake();
      return result.delivery;
    },

    listDeliveries: async (accountId, filter) => {
      if (filter.cursor !== undefined && !isPageCursor('dlv', filter.cursor)) {
        throw new SenderError('invalid_request', pageCursorProblem('dlv'));
      }
      // A search reads every delivery of the events its id names, as many as carry it (design D47).
      if (filter.search !== undefined)
        return searches.run(accountId, () => store.listDeliveries(accountId, filter));
      return store.listDeliveries(accountId, filter);
    },
    getDelivery: async (accountId, id) => found(await store.getDelivery(accountId, id), 'delivery', id),
    getEvent: async (accountId, id) => found(await store.getEvent(accountId, id), 'event', id),

    createAccount: (input) => createAccount(store, input, clock),
    getAccount: (id) => store.getAccount(id),
    authenticateApiKey: (apiKey) => authenticateApiKey(store, apiKey, clock.now()),
    authenticateKey: (apiKey) => findKeyHolder(store, apiKey, clock.now()),
    async authenticateSession(accountId, keyId) {
      const holder = await store.getApiKey(keyId, clock.now());
      return holder?.account.id === accountId ? holder.account : null;
    },
    ...operations,
    pauseEndpoint: async (accountId, id) => live(await operations.pauseEndpoint(accountId, id)),
    async resumeEndpoint(accountId, id) {
      const result = await operations.resumeEndpoint(accountId, id);
      return { ...result, endpoint: live(result.endpoint) };
    },
    ...accountAdministration({ store, clock }),
    ...endpointStatsOperations({ store, clock, reads: statistics }),
    ...portalSessions({ store, clock }),

    sealSecrets: () => sealSecrets(options.store, cipher),
    tick: async () => (await worker.tick()) + ((await notifier?.tick()) ?? 0),
    async pruneLog() {
      await store.dropExpiredSecrets(clock.now());
      await store.dropExpiredPortalTokens(clock.now());
      const pruned = await store.pruneBefore(clock.now() - settings.retentionMs);
      // After retention: a deletion that fails holds no prune back.
      await deletion.finishEndpointDeletions();
      await settling.finish();
      return pruned;
    },
    get inFlight() {
      return worker.inFlight;
    },
    start() {
      worker.start();
      notifier?.start();
      // Moves of deliveries a stopped process left (design D34) go on at once, not at the next prune.
      settling
        .finish()
        .catch((err: unknown) => logger.error({ err }, 'finishing moves of deliveries failed'));
    },
    async stop(graceMs) {
      await Promise.all([worker.stop(graceMs), notifier?.stop(), deletion.stop(), settling.stop()]);
      unsubscribe?.();
      // Attempts still running past the grace period were released; abort their requests.
      if (worker.inFlight > 0) await client.destroy();
      else await client.close();
      if (operatorClient && operatorClient !== client) await operatorClient.close();
    },
  };
}
