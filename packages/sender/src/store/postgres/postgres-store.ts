/**
 * The PostgreSQL store (`pg`): for several sender processes on several machines sharing one
 * database (design D15). Claims use `FOR UPDATE SKIP LOCKED`; every multi-row change runs in one
 * transaction (design I2 to I5); `publish`, `reenableEndpoint` and `retryNow` wake idle workers
 * everywhere through LISTEN/NOTIFY. Each operation lives in a file of its own with its SQL.
 *
 * Every table lives in one schema (default `linkhooks`): each pooled connection starts with
 * `search_path` set to it, and `migrate()` creates it.
 */

import { eventWalks } from '../event-walk.js';
import type { SenderStore } from '../port.js';
import * as accounts from './accounts.js';
import * as keys from './api-keys.js';
import { createClaimer } from './claim-due.js';
import { claimProbes } from './claim-probes.js';
import { connect } from './connection.js';
import { deleteAccountStep, markAccountDeleted } from './delete-account.js';
import * as deletion from './delete-endpoint.js';
import * as log from './delivery-log.js';
import { createDueSettler, REPAIR_DUE } from './endpoint-due.js';
import * as secrets from './endpoint-secrets.js';
import { endpointStats } from './endpoint-stats.js';
import * as endpoints from './endpoints.js';
import { createDueListener } from './listener.js';
import { applyMigrations } from './migrate.js';
import { nextDueAt } from './next-due.js';
import { claimNotices, recordNotice } from './operator-notices.js';
import { pauseEndpoint, resumeEndpoint } from './pause-endpoint.js';
import * as portal from './portal-tokens.js';
import { pruneBefore } from './prune.js';
import { publish } from './publish.js';
import { recordAttempt } from './record-attempt.js';
import { countFailedDeliveries, recoverDeliveries } from './recover.js';
import { reenableEndpoint } from './reenable-endpoint.js';
import { releaseLease } from './release-lease.js';
import { renewLeases } from './renew-leases.js';
import { retryNow } from './retry-now.js';
import { endpointsSettling, settleQueueStep } from './settle-queue.js';
import { stats } from './stats.js';
import { createLeaseVacuum } from './vacuum-leases.js';

export { VACUUM_LEASES_EVERY } from './vacuum-leases.js';

export interface PostgresStoreOptions {
  /** `postgres://user@host:5432/db`; its own parameters (e.g. `application_name`) win over the options. */
  connectionString: string;
  /** Where the tables live; `[a-z_][a-z0-9_]*`. Default `linkhooks`. */
  schema?: string;
  /** Connections in the pool. Default 10. */
  poolSize?: number;
  /** Shown in `pg_stat_activity`. Default `linkhooks-sender`. */
  applicationName?: string;
  /**
   * How long a statement, or a new connection, may go unanswered before it fails as "the database
   * cannot be reached" (the API's 503 `store_unavailable`); migrations are not limited. Default
   * 30,000.
   */
  queryTimeoutMs?: number;
}

/**
 * Opens a PostgreSQL store. Connections are made lazily; call `migrate()` once per deployment (it
 * is safe to run from every process at start-up) and `close()` on shutdown.
 *
 * @example
 * ```ts
 * const store = createPostgresStore({ connectionString: process.env.DATABASE_URL!, schema: 'linkhooks' });
 * await store.migrate();
 * const sender = createSender({ store });
 * ```
 */
export function createPostgresStore(options: PostgresStoreOptions): SenderStore {
  const poolSize = options.poolSize ?? 10;
  const pg = connect({
    connectionString: options.connectionString,
    schema: options.schema ?? 'linkhooks',
    poolSize,
    applicationName: options.applicationName ?? 'linkhooks-sender',
    queryTimeoutMs: options.queryTimeoutMs,
  });
  const listener = createDueListener(pg.config, pg.schema, pg.queryTimeoutMs);
  const vacuum = createLeaseVacuum(pg);
  const settler = createDueSettler(pg);
  const { claimDue, claimTurn } = createClaimer(pg, settler);
  const record = recordAttempt(pg, vacuum);
  const publishing = publish(pg);
  const walks = eventWalks();
  let closing: Promise<void> | undefined;

  return {
    capabilities: { sharedAcrossProcesses: true, recordsOverNetwork: true, connections: poolSize },
    migrate: async () => {
      // The repair reads every queued delivery: with migrations, without the pools' watchdog.
      return pg.migrationTx(async (client) => {
        const report = await applyMigrations(client, pg.schema);
        await client.query(REPAIR_DUE);
        return report;
      });
    },
    close() {
      closing ??= (async () => {
        await vacuum.stop();
        await settler.stop();
        await listener.close();
        await pg.end();
      })();
      return closing;
    },

    publish: publishing.publish,
    publishCommits: publishing.commits,
    claimDue,
    claimTurn,
    claimProbes: (request) => claimProbes(pg, request),
    recordAttempt: record,
    releaseLease: async (deliveryId, token) => vacuum.ended(await releaseLease(pg, deliveryId, token)),
    renewLeases: (leases, expiresAt) => renewLeases(pg, leases, expiresAt),
    nextDueAt: () => nextDueAt(pg),
    subscribe: (wake) => listener.subscribe(wake),

    createAccount: (input) => accounts.createAccount(pg, input),
    getAccount: (id) => accounts.getAccount(pg, id),
    findAccountByApiKeyHash: (hash, now) => accounts.findAccountByApiKeyHash(pg, hash, now),
    listAccounts: (page) => accounts.listAccounts(pg, page),
    findApiKey: (hash, now) => keys.findApiKey(pg, hash, now),
    getApiKey: (id, now) => keys.getApiKey(pg, id, now),
    touchApiKey: (id, now) => keys.touchApiKey(pg, id, now),
    listApiKeys: (accountId) => keys.listApiKeys(pg, accountId),
    rotateApiKey: (accountId, key, options) => keys.rotateApiKey(pg, accountId, key, options),
    revokeApiKey: (accountId, id, now) => keys.revokeApiKey(pg, accountId, id, now),
    markAccountDeleted: (id, now) => markAccountDeleted(pg, id, now),
    deleteAccountStep: (id, limit) => deleteAccountStep(pg, id, limit),
    createEndpoint: (input, admit) => endpoints.createEndpoint(pg, input, admit),
    getEndpoint: (accountId, id) => endpoints.getEndpoint(pg, accountId, id),
    listEndpoints: (accountId) => endpoints.listEndpoints(pg, accountId),
    updateEndpoint: (accountId, id, patch, now) => endpoints.updateEndpoint(pg, accountId, id, patch, now),
    markEndpointDeleted: (accountId, id, now) => deletion.markEndpointDeleted(pg, accountId, id, now),
    deleteEndpointStep: (accountId, id, limit) => deletion.deleteEndpointStep(pg, accountId, id, limit),
    deleteEndpoint: (accountId, id) => deletion.deleteEndpoint(pg, accountId, id),
    endpointsBeingDeleted: (limit) => deletion.endpointsBeingDeleted(pg, limit),
    reenableEndpoint: (accountId, id, options) => reenableEndpoint(pg, accountId, id, options),
    claimNotices: (request) => claimNotices(pg, request),
    recordNotice: (outcome) => recordNotice(pg, outcome),
    pauseEndpoint: (accountId, id, now) => pauseEndpoint(pg, accountId, id, now),
    resumeEndpoint: (accountId, id, now) => resumeEndpoint(pg, accountId, id, now),
    settleQueueStep: (id, limit, now) => settleQueueStep(pg, id, limit, now),
    endpointsSettling: (limit) => endpointsSettling(pg, limit),
    recoverDeliveries: (accountId, id, request) => recoverDeliveries(pg, accountId, id, request),
    countFailedDeliveries: (id, range) => countFailedDeliveries(pg, id, range),
    retryNow: (accountId, id, now) => retryNow(pg, accountId, id, now),
    listDeliveries: (accountId, filter) => log.listDeliveries(pg, accountId, filter),
    getDelivery: (accountId, id) => log.getDelivery(pg, accountId, id),
    getEvent: (accountId, id) => log.getEvent(pg, accountId, id),
    pruneBefore: (cutoff) => pruneBefore(pg, walks, cutoff),
    dropExpiredSecrets: (now) => endpoints.dropExpiredSecrets(pg, now),
    stats: () => stats(pg),
    endpointStats: (accountId, id, window) => endpointStats(pg, accountId, id, window),
    secretsNotSealedWith: (prefix, after, limit) => secrets.secretsNotSealedWith(pg, prefix, after, limit),
    replaceSecrets: (changes) => secrets.replaceSecrets(pg, changes),
    createPortalToken: (token) => portal.createPortalToken(pg, token),
    takePortalToken: (hash) => portal.takePortalToken(pg, hash),
    dropExpiredPortalTokens: (now) => portal.dropExpiredPortalTokens(pg, now),
  };
}
