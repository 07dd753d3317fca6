/**
 * The SQLite store (better-sqlite3, WAL): the embedded default, and in memory (`:memory:`) the
 * store for tests and trials. Each operation lives in a file of its own with its SQL; every
 * multi-row change runs in one `BEGIN IMMEDIATE` transaction (design I2 to I5).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { SenderStore } from '../port.js';
import * as accounts from './accounts.js';
import * as keys from './api-keys.js';
import { claims } from './claim-due.js';
import { claimProbes } from './claim-probes.js';
import { openSqlite } from './database.js';
import { deleteAccountStep, markAccountDeleted } from './delete-account.js';
import * as deletion from './delete-endpoint.js';
import * as log from './delivery-log.js';
import * as secrets from './endpoint-secrets.js';
import { endpointStats } from './endpoint-stats.js';
import * as endpoints from './endpoints.js';
import { migrateSqlite } from './migrate.js';
import { nextDueAt } from './next-due.js';
import { offLoopReads } from './off-loop-reads.js';
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
import { createWalSync } from './wal-sync.js';
import { createWriteQueue } from './write-queue.js';

export interface SqliteStoreOptions {
  /** A file path, or `:memory:`. */
  filename: string;
  /**
   * How publishes and every change a user is answered about commit. `FULL` (default) syncs the WAL
   * before `publish` (or the change: an account, a key, an endpoint, a pause…) returns, so a published
   * event survives a power cut, not only a crashed process; the sync runs off the event loop
   * (design D33). `NORMAL` answers at the commit: a crashed process loses nothing, a power cut may.
   * Claims and attempt records always commit `NORMAL`: losing one to a power cut only means an
   * attempt is made again, which at-least-once delivery allows; a crashed process loses neither.
   */
  synchronous?: 'FULL' | 'NORMAL';
}

/**
 * @example
 * const store = createSqliteStore({ filename: './data/linkhooks.db' });
 * await store.migrate();
 * const sender = createSender({ store });
 */
export function createSqliteStore(options: SqliteStoreOptions): SenderStore {
  const db = openSqlite(options.filename);
  const durable = (options.synchronous ?? 'FULL') === 'FULL' && !db.inMemory;
  const wal = durable ? createWalSync(`${db.file}-wal`) : null;
  let commits = 0; // without a WAL to sync, the write queue's commits are numbered here
  const write = createWriteQueue(db, () => wal?.committed() ?? ++commits);
  const reads = offLoopReads(db);
  /**
   * A change a user is answered about, made as a publish is (design D79): not while a failed sync
   * refuses every commit, and answered once a sync covers it. A deletion's steps need not wait each:
   * an account's that finds nothing left waits, and its sync covers every step before; an
   * endpoint's last transaction is a change of its own.
   */
  let letGo: Promise<void> = Promise.resolve();
  const synced = async <T>(change: () => T | Promise<T>): Promise<T> => {
    if (!wal) return change();
    const hold = wal.holdCommit();
    if (hold) {
      await hold;
      // The changes held behind a sync are let go together as it ends: each commits at a turn of
      // the event loop of its own, not all in one (100 pauses at once, each moving its first 100
      // deliveries, held the loop half a second).
      const turn = letGo.then(() => nextTurn());
      letGo = turn;
      await turn;
    }
    const answer = change(); // committed here, before any await (a recovery's count comes after)
    return (await Promise.all([answer, wal.durable(wal.committed())]))[0];
  };
  const ops = {
    migrate: migrateSqlite(db),
    publishing: publish(db, write, wal),
    ...claims(db, write),
    claimProbes: claimProbes(db, write),
    recordAttempt: recordAttempt(db, write),
    createEndpoint: endpoints.createEndpoint(db),
    updateEndpoint: endpoints.updateEndpoint(db),
    reenableEndpoint: reenableEndpoint(db),
    retryNow: retryNow(db),
    pruneBefore: pruneBefore(db),
    replaceSecrets: secrets.replaceSecrets(db),
    createAccount: accounts.createAccount(db),
    rotateApiKey: keys.rotateApiKey(db),
    markAccountDeleted: markAccountDeleted(db),
    deleteAccountStep: deleteAccountStep(db),
    markEndpointDeleted: deletion.markEndpointDeleted(db),
    deleteEndpointStep: deletion.deleteEndpointStep(db),
    pauseEndpoint: pauseEndpoint(db),
    resumeEndpoint: resumeEndpoint(db),
    settleQueueStep: settleQueueStep(db),
    recoverDeliveries: recoverDeliveries(db),
    endpointStats: endpointStats(reads),
    claimNotices: claimNotices(db),
  };
  return {
    capabilities: { sharedAcrossProcesses: false, recordsOverNetwork: false },
    migrate: async () => ops.migrate(),
    close: async () => {
      await reads.close();
      await db.close();
      wal?.close();
    },

    publish: ops.publishing.publish,
    publishCommits: ops.publishing.commits,
    claimDue: ops.claimDue,
    claimTurn: ops.claimTurn,
    claimProbes: ops.claimProbes,
    recordAttempt: ops.recordAttempt,
    // Beside the claims and records: one transaction a turn, held with them while the WAL catches up (design D58).
    releaseLease: async (deliveryId, token) => (await write(() => releaseLease(db, deliveryId, token))).value,
    renewLeases: async (leases, expiresAt) => (await write(() => renewLeases(db, leases, expiresAt))).value,
    nextDueAt: async () => nextDueAt(db),

    createAccount: async (input) => synced(() => ops.createAccount(input)),
    getAccount: async (id) => accounts.getAccount(db, id),
    findAccountByApiKeyHash: async (hash, now) => accounts.findAccountByApiKeyHash(db, hash, now),
    listAccounts: async (page) => accounts.listAccounts(db, page),
    findApiKey: async (hash, now) => keys.findApiKey(db, hash, now),
    getApiKey: async (id, now) => keys.getApiKey(db, id, now),
    touchApiKey: async (id, now) => keys.touchApiKey(db, id, now),
    listApiKeys: async (accountId) => keys.listApiKeys(db, accountId),
    rotateApiKey: async (accountId, key, options) => synced(() => ops.rotateApiKey(accountId, key, options)),
    revokeApiKey: async (accountId, id, now) => synced(() => keys.revokeApiKey(db, accountId, id, now)),
    markAccountDeleted: async (id, now) => synced(() => ops.markAccountDeleted(id, now)),
    deleteAccountStep: async (id, limit) => {
      const removed = ops.deleteAccountStep(id, limit);
      return removed === 0 ? synced(() => removed) : removed;
    },
    createEndpoint: async (input, admit) => synced(() => ops.createEndpoint(input, admit)),
    getEndpoint: async (accountId, id) => endpoints.getEndpoint(db, accountId, id),
    listEndpoints: async (accountId) => endpoints.listEndpoints(db, accountId),
    updateEndpoint: async (accountId, id, patch, now) =>
      synced(() => ops.updateEndpoint(accountId, id, patch, now)),
    markEndpointDeleted: async (accountId, id, now) =>
      synced(() => ops.markEndpointDeleted(accountId, id, now)),
    // The deletion's last transaction (deleteEndpoint) waits for the sync that covers its steps.
    deleteEndpointStep: async (accountId, id, limit) => ops.deleteEndpointStep(accountId, id, limit),
    deleteEndpoint: async (accountId, id) => synced(() => deletion.deleteEndpoint(db, accountId, id)),
    endpointsBeingDeleted: async (limit) => deletion.endpointsBeingDeleted(db, limit),
    reenableEndpoint: async (accountId, id, options) =>
      synced(() => ops.reenableEndpoint(accountId, id, options)),
    claimNotices: async (request) => ops.claimNotices(request),
    recordNotice: async (outcome) => recordNotice(db, outcome),
    pauseEndpoint: async (accountId, id, now) => synced(() => ops.pauseEndpoint(accountId, id, now)),
    resumeEndpoint: async (accountId, id, now) => synced(() => ops.resumeEndpoint(accountId, id, now)),
    settleQueueStep: async (id, limit, now) => ops.settleQueueStep(id, limit, now),
    endpointsSettling: async (limit) => endpointsSettling(db, limit),
    recoverDeliveries: async (accountId, id, request) =>
      synced(() => ops.recoverDeliveries(accountId, id, request)),
    countFailedDeliveries: (id, range) => countFailedDeliveries(reads, id, range),
    retryNow: async (accountId, id, now) => synced(() => ops.retryNow(accountId, id, now)),
    listDeliveries: (accountId, filter) => log.listDeliveries(db, reads, accountId, filter),
    getDelivery: async (accountId, id) => log.getDelivery(db, accountId, id),
    getEvent: async (accountId, id) => log.getEvent(db, accountId, id),
    pruneBefore: async (cutoff) => ops.pruneBefore(cutoff),
    dropExpiredSecrets: async (now) => endpoints.dropExpiredSecrets(db, now),
    stats: () => stats(reads),
    endpointStats: async (accountId, id, window) => ops.endpointStats(accountId, id, window),
    secretsNotSealedWith: async (prefix, after, limit) =>
      secrets.secretsNotSealedWith(db, prefix, after, limit),
    replaceSecrets: async (changes) => synced(() => ops.replaceSecrets(changes)),
    createPortalToken: async (token) => synced(() => portal.createPortalToken(db, token)),
    takePortalToken: async (hash) => synced(() => portal.takePortalToken(db, hash)),
    dropExpiredPortalTokens: async (now) => portal.dropExpiredPortalTokens(db, now),
  };
}
