/**
 * The SQLite store (better-sqlite3, WAL): the embedded default. Every multi-row change runs in
 * one `BEGIN IMMEDIATE` transaction (DESIGN invariants 2-5).
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { DeliveryStatus } from '../../domain/delivery-state.js';
import { decideEndpoint } from '../../domain/disable-rule.js';
import { claimWindow } from '../claim-window.js';
import { newLeaseToken } from '../lease.js';
import { newDelivery } from '../new-delivery.js';
import { pickDue } from '../pick-due.js';
import type { AttemptApplied, ClaimRequest, PublishTarget, SenderStore, StoreStats } from '../port.js';
import type { ClaimedDelivery, DeliveryRecord, EndpointRecord } from '../records.js';
import { attemptParams, type Row, toAccount, toAttempt, toDelivery, toEndpoint } from '../rows.js';
import { SQLITE_MIGRATIONS } from './migrations.js';
import * as q from './queries.js';

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

export function createSqliteStore(options: SqliteStoreOptions): SenderStore {
  if (options.filename !== ':memory:') mkdirSync(dirname(options.filename), { recursive: true });
  const db = new Database(options.filename);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const publishSync = options.synchronous ?? 'FULL';
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');

  const cache = new Map<string, Database.Statement>();
  const st = (sql: string) => {
    let s = cache.get(sql);
    if (!s) {
      s = db.prepare(sql);
      cache.set(sql, s);
    }
    return s;
  };
  const immediate = <A extends unknown[], R>(fn: (...args: A) => R) => {
    const tx = db.transaction(fn);
    return (...args: A): R => tx.immediate(...args);
  };

  const migrate = immediate(() => {
    db.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)',
    );
    const applied = new Set(
      (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map(
        (r) => r.version,
      ),
    );
    for (const m of SQLITE_MIGRATIONS) {
      if (applied.has(m.version)) continue;
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        m.version,
        m.name,
        Date.now(),
      );
    }
  });

  // The SQLite claim picks in the process (pickDue) from a cursor over the due rows: ranking per
  // endpoint in SQL (a window function over the whole window, then a second sort) and reading the
  // claimed rows again cost twice as much per delivery, measured with a claim-record cycle.
  const claim = immediate(({ now, limit, leaseMs, perEndpointCap: cap, finishing = [] }: ClaimRequest) => {
    if (limit <= 0) return [];
    const inFlight = new Map(
      (
        st(q.IN_FLIGHT).all({
          now,
          finishing: JSON.stringify(finishing.map((f) => [f.deliveryId, f.leaseToken])),
        }) as { endpoint_id: string; n: number }[]
      ).map((r) => [r.endpoint_id, r.n]),
    );
    const full = [...inFlight].filter(([, n]) => n >= cap).map(([endpointId]) => endpointId);
    const due = st(q.SELECT_DUE).iterate({
      now,
      full: JSON.stringify(full),
      window: claimWindow(limit, cap),
    }) as IterableIterator<Row>;
    let rows: Row[];
    try {
      rows = pickDue(due, (row) => row.endpoint_id as string, inFlight, cap, limit);
    } finally {
      due.return?.(); // an open cursor keeps the connection busy; picking may stop before the end
    }
    if (rows.length === 0) return [];
    // One token for the batch: a lease is the pair (delivery, token), unique per claim all the same.
    const token = newLeaseToken();
    st(q.LEASE_DELIVERIES).run({
      token,
      expiresAt: now + leaseMs,
      ids: JSON.stringify(rows.map((r) => r.id)),
    });
    return rows.map(
      (row): ClaimedDelivery => ({
        delivery: toDelivery(row),
        leaseToken: token,
        leaseExpiresAt: now + leaseMs,
        body: new Uint8Array(row.body as Buffer),
        url: row.url as string,
        secret: row.secret as string,
      }),
    );
  });

  const recordOne = (result: Parameters<SenderStore['recordAttempt']>[0]): AttemptApplied => {
    const { claim: c, attempt, decision, policy, now } = result;
    const row = st(q.SELECT_LEASED).get({ id: c.deliveryId, token: c.leaseToken, number: attempt.number }) as
      | Row
      | undefined;
    if (!row || row.recorded === 1) return { applied: false }; // lease lost (invariant 3) or recorded (4)
    const delivery = toDelivery(row);
    // The attempt belongs to the delivery whose lease was checked, whatever the record says.
    st(q.INSERT_ATTEMPT).run(attemptParams({ ...attempt, deliveryId: delivery.id }));
    const failures = row.endpoint_failures as number;
    const verdict = decideEndpoint(failures, decision, policy);
    if (verdict.consecutiveFailures !== failures) {
      st(q.SET_ENDPOINT_FAILURES).run(verdict.consecutiveFailures, delivery.endpointId);
    }
    let enabled = row.endpoint_enabled === 1;
    let disabledEndpoint: EndpointRecord | undefined;
    if (verdict.disable && enabled) {
      st(q.DISABLE_ENDPOINT).run(now, now, delivery.endpointId);
      st(q.HOLD_DELIVERIES).run(now, delivery.endpointId, delivery.id);
      enabled = false;
      disabledEndpoint = toEndpoint(st(q.SELECT_ENDPOINT_BY_ID).get(delivery.endpointId) as Row);
    }
    const status: DeliveryStatus =
      decision.status === 'awaiting_retry' && !enabled ? 'held' : decision.status;
    st(q.FINISH_ATTEMPT).run({
      id: delivery.id,
      status,
      attempts: decision.attempts,
      nextAttemptAt: decision.nextAttemptAt,
      failureKind: attempt.failureKind,
      statusCode: attempt.statusCode,
      now,
    });
    return { applied: true, status, ...(disabledEndpoint ? { disabledEndpoint } : {}) };
  };
  const recordAlone = immediate(recordOne);

  // Attempts finishing together are recorded in one write transaction (one WAL commit) instead of
  // one each: under load the commit, not the statements, was the cost. The compare-and-set of
  // invariant 3 holds per attempt as before.
  type Pending = {
    result: Parameters<SenderStore['recordAttempt']>[0];
    resolve: (a: AttemptApplied) => void;
    reject: (e: unknown) => void;
  };
  let pending: Pending[] = [];
  // The whole batch in one write transaction. Recording an attempt throws only on a broken
  // database, not on a lost lease or a duplicate (those are answers); if it does, the transaction
  // rolls back whole and each attempt is recorded again in a transaction of its own, so only the
  // attempt that fails sees the error.
  const recordAll = immediate((batch: Pending[]) => batch.map((item) => recordOne(item.result)));
  const flushRecords = (batch: Pending[]): (() => void)[] => {
    try {
      const applied = recordAll(batch);
      return batch.map((item, i) => () => item.resolve(applied[i]!));
    } catch {
      return batch.map((item) => {
        try {
          const applied = recordAlone(item.result);
          return () => item.resolve(applied);
        } catch (error) {
          return () => item.reject(error);
        }
      });
    }
  };
  const record = (result: Pending['result']) =>
    new Promise<AttemptApplied>((resolve, reject) => {
      pending.push({ result, resolve, reject });
      if (pending.length > 1) return;
      setImmediate(() => {
        const batch = pending;
        pending = [];
        for (const settle of flushRecords(batch)) settle();
      });
    });

  const publish = immediate(
    (event: Parameters<SenderStore['publish']>[0], nextId: () => string, target: PublishTarget) => {
      st(q.INSERT_EVENT).run(event.id, event.accountId, event.name, Buffer.from(event.body), event.createdAt);
      const endpoints = (st(q.SELECT_ENDPOINTS_OF_ACCOUNT).all(event.accountId) as Row[]).map(toEndpoint);
      const created: DeliveryRecord[] = [];
      for (const endpoint of endpoints) {
        if (!endpoint.events.includes(event.name as never)) continue;
        if (target.endpointId !== undefined && endpoint.id !== target.endpointId) continue;
        const delivery: DeliveryRecord = newDelivery(event, endpoint, nextId());
        st(q.INSERT_DELIVERY).run({ ...delivery, now: event.createdAt });
        created.push(delivery);
      }
      return created;
    },
  );

  const reenable = immediate((accountId: string, id: string, replaySkipped: boolean, now: number) => {
    if (st(q.REENABLE_ENDPOINT).run(now, id, accountId).changes === 0) return null;
    const resumed = st(q.RESUME_HELD).run(now, now, id).changes;
    const replayed = replaySkipped ? st(q.REPLAY_SKIPPED).run(now, now, id).changes : 0;
    return { endpoint: toEndpoint(st(q.SELECT_ENDPOINT).get(id, accountId) as Row), resumed, replayed };
  });

  const retryNow = immediate((accountId: string, id: string, now: number) => {
    const row = st(q.SELECT_DELIVERY).get(id, accountId) as Row | undefined;
    if (!row) return { ok: false as const, reason: 'not_found' as const };
    const endpoint = toEndpoint(st(q.SELECT_ENDPOINT_BY_ID).get(row.endpoint_id) as Row);
    if (!endpoint.enabled) return { ok: false as const, reason: 'endpoint_disabled' as const };
    if (row.lease_expires_at !== null && (row.lease_expires_at as number) > now) {
      return { ok: false as const, reason: 'in_flight' as const };
    }
    st(q.RETRY_NOW).run(now, now, id);
    return { ok: true as const, delivery: toDelivery(st(q.SELECT_DELIVERY).get(id, accountId) as Row) };
  });

  // Read and write in one transaction, so two processes on one file cannot lose a change.
  const updateEndpoint = immediate(
    (accountId: string, id: string, patch: Parameters<SenderStore['updateEndpoint']>[2], now: number) => {
      const row = st(q.SELECT_ENDPOINT).get(id, accountId) as Row | undefined;
      if (!row) return null;
      const current = toEndpoint(row);
      st(q.UPDATE_ENDPOINT).run({
        id,
        accountId,
        url: patch.url ?? current.url,
        events: JSON.stringify(patch.events ?? current.events),
        secret: patch.secret ?? current.secret,
        description: patch.description === undefined ? current.description : patch.description,
        now,
      });
      return toEndpoint(st(q.SELECT_ENDPOINT).get(id, accountId) as Row);
    },
  );

  const prune = immediate((cutoff: number) => {
    const removed = st(q.PRUNE_DELIVERIES).run(cutoff).changes;
    st(q.PRUNE_EVENTS).run(cutoff);
    return removed;
  });

  return {
    kind: 'sqlite',
    async migrate() {
      migrate();
    },
    async close() {
      db.close();
    },
    async createAccount(input) {
      st(q.INSERT_ACCOUNT).run(input);
      return toAccount(st(q.SELECT_ACCOUNT).get(input.id) as Row);
    },
    async getAccount(id) {
      const row = st(q.SELECT_ACCOUNT).get(id) as Row | undefined;
      return row ? toAccount(row) : null;
    },
    async findAccountByApiKeyHash(hash) {
      const row = st(q.SELECT_ACCOUNT_BY_KEY_HASH).get(hash) as Row | undefined;
      return row ? toAccount(row) : null;
    },

    async createEndpoint(input) {
      st(q.INSERT_ENDPOINT).run({ ...input, events: JSON.stringify(input.events) });
      return toEndpoint(st(q.SELECT_ENDPOINT).get(input.id, input.accountId) as Row);
    },
    async getEndpoint(accountId, id) {
      const row = st(q.SELECT_ENDPOINT).get(id, accountId) as Row | undefined;
      return row ? toEndpoint(row) : null;
    },
    async listEndpoints(accountId) {
      return (st(q.SELECT_ENDPOINTS_OF_ACCOUNT).all(accountId) as Row[]).map(toEndpoint);
    },
    async updateEndpoint(accountId, id, patch, now) {
      return updateEndpoint(accountId, id, patch, now);
    },
    async deleteEndpoint(accountId, id) {
      return st(q.DELETE_ENDPOINT).run(id, accountId).changes > 0;
    },
    async publish(event, nextId, target = {}) {
      if (publishSync === 'NORMAL') return publish(event, nextId, target);
      db.pragma('synchronous = FULL');
      try {
        return publish(event, nextId, target);
      } finally {
        db.pragma('synchronous = NORMAL');
      }
    },
    async claimDue(request) {
      return claim(request);
    },
    async recordAttempt(result) {
      return record(result);
    },
    async releaseLease(deliveryId, token) {
      st(q.RELEASE_LEASE).run(deliveryId, token);
    },
    async nextDueAt() {
      const { due, leased } = st(q.NEXT_DUE).get() as { due: number | null; leased: number | null };
      return due === null ? leased : leased === null ? due : Math.min(due, leased);
    },
    async reenableEndpoint(accountId, id, { replaySkipped, now }) {
      return reenable(accountId, id, replaySkipped, now);
    },
    async retryNow(accountId, id, now) {
      return retryNow(accountId, id, now);
    },
    async listDeliveries(accountId, filter) {
      const rows = st(q.LIST_DELIVERIES).all({
        accountId,
        endpointId: filter.endpointId ?? null,
        status: filter.status ?? null,
        event: filter.event ?? null,
        cursor: filter.cursor ?? null,
        limit: filter.limit + 1,
      }) as Row[];
      const items = rows.slice(0, filter.limit).map(toDelivery);
      return { items, nextCursor: rows.length > filter.limit ? items[items.length - 1]!.id : null };
    },
    async getDelivery(accountId, id) {
      const row = st(q.SELECT_DELIVERY).get(id, accountId) as Row | undefined;
      if (!row) return null;
      return { delivery: toDelivery(row), attempts: (st(q.SELECT_ATTEMPTS).all(id) as Row[]).map(toAttempt) };
    },
    async getEvent(accountId, id) {
      const row = st(q.SELECT_EVENT).get(id, accountId) as Row | undefined;
      if (!row) return null;
      return {
        id: row.id as string,
        accountId: row.account_id as string,
        name: row.name as string,
        body: new Uint8Array(row.body as Buffer),
        createdAt: row.created_at as number,
      };
    },
    async pruneBefore(cutoff) {
      return prune(cutoff);
    },
    async stats(): Promise<StoreStats> {
      const byStatus = { pending: 0, awaiting_retry: 0, delivered: 0, failed: 0, held: 0, skipped: 0 };
      for (const r of st(q.COUNT_BY_STATUS).all() as { status: keyof typeof byStatus; n: number }[])
        byStatus[r.status] = r.n;
      const disabledEndpoints = (st(q.COUNT_DISABLED).get() as { n: number }).n;
      return { byStatus, disabledEndpoints };
    },
  };
}
