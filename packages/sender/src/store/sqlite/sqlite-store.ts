/**
 * The SQLite store (better-sqlite3, WAL): the embedded default, and in memory (`:memory:`) the
 * store for tests and trials. Each operation lives in a file of its own with its SQL; every
 * multi-row change runs in one `BEGIN IMMEDIATE` transaction (design I2 to I5).
 */
import type { SenderStore } from '../port.js';
import * as accounts from './accounts.js';
import { claimDue } from './claim-due.js';
import { openSqlite } from './database.js';
import * as log from './delivery-log.js';
import * as endpoints from './endpoints.js';
import { migrateSqlite } from './migrate.js';
import { nextDueAt } from './next-due.js';
import { pruneBefore } from './prune.js';
import { publish } from './publish.js';
import { recordAttempt } from './record-attempt.js';
import { reenableEndpoint } from './reenable-endpoint.js';
import { releaseLease } from './release-lease.js';
import { renewLeases } from './renew-leases.js';
import { retryNow } from './retry-now.js';
import { stats } from './stats.js';

export interface SqliteStoreOptions {
  /** A file path, or `:memory:`. */
  filename: string;
  /**
   * How publishes commit. `FULL` (default) syncs the WAL before `publish` returns, so a published
   * event survives a power cut, not only a crashed process. `NORMAL` trades that for throughput.
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
  const ops = {
    migrate: migrateSqlite(db),
    publish: publish(db, options.synchronous ?? 'FULL'),
    claimDue: claimDue(db),
    recordAttempt: recordAttempt(db),
    updateEndpoint: endpoints.updateEndpoint(db),
    reenableEndpoint: reenableEndpoint(db),
    retryNow: retryNow(db),
    pruneBefore: pruneBefore(db),
  };
  return {
    capabilities: { sharedAcrossProcesses: false, recordsOverNetwork: false },
    migrate: async () => ops.migrate(),
    close: async () => void db.raw.close(),

    publish: ops.publish,
    claimDue: async (request) => ops.claimDue(request),
    recordAttempt: ops.recordAttempt,
    releaseLease: async (deliveryId, token) => releaseLease(db, deliveryId, token),
    renewLeases: async (leases, expiresAt) => renewLeases(db, leases, expiresAt),
    nextDueAt: async () => nextDueAt(db),

    createAccount: async (input) => accounts.createAccount(db, input),
    getAccount: async (id) => accounts.getAccount(db, id),
    findAccountByApiKeyHash: async (hash) => accounts.findAccountByApiKeyHash(db, hash),
    createEndpoint: async (input) => endpoints.createEndpoint(db, input),
    getEndpoint: async (accountId, id) => endpoints.getEndpoint(db, accountId, id),
    listEndpoints: async (accountId) => endpoints.listEndpoints(db, accountId),
    updateEndpoint: async (accountId, id, patch, now) => ops.updateEndpoint(accountId, id, patch, now),
    deleteEndpoint: async (accountId, id) => endpoints.deleteEndpoint(db, accountId, id),
    reenableEndpoint: async (accountId, id, { replaySkipped, now }) =>
      ops.reenableEndpoint(accountId, id, replaySkipped, now),
    retryNow: async (accountId, id, now) => ops.retryNow(accountId, id, now),
    listDeliveries: async (accountId, filter) => log.listDeliveries(db, accountId, filter),
    getDelivery: async (accountId, id) => log.getDelivery(db, accountId, id),
    getEvent: async (accountId, id) => log.getEvent(db, accountId, id),
    pruneBefore: async (cutoff) => ops.pruneBefore(cutoff),
    dropExpiredSecrets: async (now) => endpoints.dropExpiredSecrets(db, now),
    stats: async () => stats(db),
  };
}
