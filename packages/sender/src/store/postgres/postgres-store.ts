/**
 * The PostgreSQL store (`pg`): for several sender processes on several machines sharing one
 * database (DESIGN: Engine). Claims use `FOR UPDATE SKIP LOCKED`; every multi-row change runs in
 * one transaction (DESIGN invariants 2-5); `publish`, `reenableEndpoint` and `retryNow` wake
 * idle workers everywhere through LISTEN/NOTIFY.
 *
 * Every table lives in one schema (default `linkhooks`): each pooled connection starts with
 * `search_path` set to it, and `migrate()` creates it.
 */
import pg from 'pg';
import type { DeliveryStatus } from '../../domain/delivery-state.js';
import { decideEndpoint } from '../../domain/disable-rule.js';
import { claimWindow } from '../claim-window.js';
import { leaseKey } from '../lease.js';
import { newDelivery } from '../new-delivery.js';
import type { AttemptApplied, RetryNowResult, SenderStore, StoreStats } from '../port.js';
import type { AttemptRecord, ClaimedDelivery, DeliveryRecord, EndpointRecord } from '../records.js';
import { attemptParams, type Row, toAccount, toAttempt, toDelivery, toEndpoint } from '../rows.js';
import { createDueListener } from './listener.js';
import { applyMigrations } from './migrations.js';
import * as q from './queries.js';

export interface PostgresStoreOptions {
  /** `postgres://user@host:5432/db`; its own parameters (e.g. `application_name`) win over the options. */
  connectionString: string;
  /** Where the tables live; `[a-z_][a-z0-9_]*`. Default `linkhooks`. */
  schema?: string;
  /** Connections in the pool. Default 10. */
  poolSize?: number;
  /** Shown in `pg_stat_activity`. Default `linkhooks-sender`. */
  applicationName?: string;
}

const ZERO_COUNTS = (): Record<DeliveryStatus, number> => ({
  pending: 0,
  awaiting_retry: 0,
  delivered: 0,
  failed: 0,
  held: 0,
  skipped: 0,
});

const attemptValues = (deliveryId: string, a: AttemptRecord) => {
  const p = attemptParams(a);
  return [
    deliveryId,
    p.number,
    p.startedAt,
    p.durationMs,
    p.statusCode,
    p.failureKind,
    p.errorMessage,
    p.responseSnippet,
    p.nextAttemptAt,
    p.requestHeaders,
  ];
};

/** Leases ended (recorded or released) by one process between two vacuums of `leases`. */
export const VACUUM_LEASES_EVERY = 1000;

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
  const schema = options.schema ?? 'linkhooks';
  const quoted = q.quoteSchema(schema);
  const base: pg.ClientConfig = {
    connectionString: options.connectionString,
    application_name: options.applicationName ?? 'linkhooks-sender',
  };
  // Claims and attempt records commit without waiting for the WAL flush: losing one to a crash of
  // the database server only means an attempt is made again, which at-least-once delivery allows.
  // `publish` turns the flush back on for its own transaction: an event is durable when it returns.
  // The prepared statements (claim, record) always run their generic plan: it walks the due-time
  // index in order and stops after the claim window, whatever the table holds. Left to choose,
  // PostgreSQL re-plans the claim on every call once a million retries wait in the future (their
  // estimate makes the generic plan look dear), which made a claim ~1.6× slower than with a
  // thousand; unnamed one-off queries are planned for their values either way.
  const pool = new pg.Pool({
    ...base,
    max: options.poolSize ?? 10,
    options: `-c search_path=${quoted} -c synchronous_commit=off -c plan_cache_mode=force_generic_plan`,
  });
  // An idle connection that dies (server restart, network) is dropped by the pool and replaced on
  // the next query; without a handler its 'error' would crash the process.
  pool.on('error', () => undefined);
  // `pool.end()` resolves before the sockets close; close() waits for them, so a store that has
  // closed holds no server connection any more.
  const open = new Set<Promise<void>>();
  pool.on('connect', (client) => {
    const ended = new Promise<void>((resolve) => client.once('end', () => resolve()));
    open.add(ended);
    void ended.then(() => open.delete(ended));
  });
  const listener = createDueListener(base, schema);
  let closing: Promise<void> | undefined;

  /**
   * Runs `fn` in a transaction (see txOnce), again if PostgreSQL aborts it as a deadlock victim
   * (see deadlockRetried).
   */
  async function tx<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return deadlockRetried(() => txOnce(fn));
  }
  /**
   * Runs `run` again, up to `tries` times in all, while PostgreSQL aborts it as a deadlock victim.
   * The lock orders here are consistent where they can be (delivery before lease, deliveries in id
   * order), but a disabling locks its endpoint before its deliveries and a batched record the other
   * way round. A victim was rolled back whole, so running it again is safe.
   */
  async function deadlockRetried<T>(run: () => Promise<T>, tries = 3): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await run();
      } catch (error) {
        if ((error as { code?: string }).code !== '40P01' || attempt >= tries) throw error;
      }
    }
  }
  /** BEGIN … COMMIT on one connection; ROLLBACK on error; the connection always goes back. */
  async function txOnce<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => {
        broken = rollbackError; // the connection is unusable: destroy it rather than pool it
      });
      throw error;
    } finally {
      client.release(broken);
    }
  }

  const rows = async (sql: string, values: unknown[]) => (await pool.query<Row>(sql, values)).rows;
  /**
   * A named (prepared) statement: parsed and planned once per connection instead of on every call.
   * Only for the hot paths (claim, record): their CTEs cost more to plan than to run.
   */
  const prepared = async (name: string, text: string, values: unknown[]) =>
    (await pool.query<Row>({ name: `linkhooks_${name}`, text, values })).rows;
  const one = async (client: pg.PoolClient, sql: string, values: unknown[]): Promise<Row | undefined> =>
    (await client.query<Row>(sql, values)).rows[0];

  /**
   * Attempts that cannot disable their endpoint, recorded together: every such attempt that
   * finishes in the same turn of the event loop, or while the previous batch is being recorded,
   * goes into one RECORD_ATTEMPTS_FAST statement.
   */
  type Fast = {
    claim: { deliveryId: string; leaseToken: string };
    attempt: AttemptRecord;
    status: DeliveryStatus;
    attempts: number;
    now: number;
  };
  let fastQueue: { item: Fast; resolve: (a: AttemptApplied) => void; reject: (e: unknown) => void }[] = [];
  async function flushFast() {
    const batch = fastQueue;
    fastQueue = [];
    const columns: unknown[][] = Array.from({ length: 14 }, () => []);
    for (const { item } of batch) {
      const values = [
        item.claim.deliveryId,
        item.claim.leaseToken,
        ...attemptValues(item.claim.deliveryId, item.attempt).slice(1),
        item.status,
        item.attempts,
        item.status === 'delivered',
      ];
      for (const [i, v] of values.entries()) columns[i]!.push(v);
    }
    try {
      const now = Math.max(...batch.map((b) => b.item.now));
      const applied = await deadlockRetried(() =>
        prepared('record_attempts_fast', q.RECORD_ATTEMPTS_FAST, [...columns, now]),
      );
      leasesEnded(applied.length);
      // Keyed by lease, not delivery: a batch can hold two attempts of one delivery.
      const byLease = new Map(
        applied.map((r) => [leaseKey(r.id as string, r.token as string), r.status as DeliveryStatus]),
      );
      for (const { item, resolve } of batch) {
        const status = byLease.get(leaseKey(item.claim.deliveryId, item.claim.leaseToken));
        resolve(status ? { applied: true, status } : { applied: false });
      }
    } catch (error) {
      for (const { reject } of batch) reject(error);
    }
  }
  // One batch in flight at a time: attempts that finish while it runs wait for it and go together
  // in the next, so under load a round trip records a round trip's worth of attempts rather than
  // each turn of the event loop sending its own statement.
  let flushing = false;
  async function flushAll() {
    flushing = true;
    while (fastQueue.length > 0) await flushFast();
    flushing = false;
  }
  // Every attempt inserts a lease and deletes it: the table holds a few rows but leaves a dead
  // one per attempt, which every claim's in-flight count would read through until autovacuum
  // comes by (once a minute at best; at a few thousand attempts a second, hundreds of pages).
  // Each process vacuums it after every VACUUM_LEASES_EVERY leases it ended, in the background
  // (SKIP_LOCKED: never waiting on another process's vacuum). A role that does not own the
  // table gets a warning from PostgreSQL and autovacuum alone.
  let endedSinceVacuum = 0;
  let vacuuming: Promise<void> | undefined;
  function leasesEnded(n: number) {
    endedSinceVacuum += n;
    if (endedSinceVacuum < VACUUM_LEASES_EVERY || vacuuming || closing) return;
    endedSinceVacuum = 0;
    vacuuming = pool
      .query(q.VACUUM_LEASES)
      .then(
        () => undefined,
        () => undefined, // a maintenance pass: the next one will try again
      )
      .finally(() => {
        vacuuming = undefined;
      });
  }

  const recordFast = (item: Fast) =>
    new Promise<AttemptApplied>((resolve, reject) => {
      fastQueue.push({ item, resolve, reject });
      if (!flushing && fastQueue.length === 1) setImmediate(() => void flushAll());
    });

  return {
    kind: 'postgres',

    async migrate() {
      await tx((client) => applyMigrations(client, schema));
    },

    close() {
      closing ??= (async () => {
        await vacuuming;
        await listener.close();
        await pool.end();
        await Promise.all([...open]);
      })();
      return closing;
    },

    async createAccount(input) {
      const [row] = await rows(q.INSERT_ACCOUNT, [
        input.id,
        input.name,
        input.plan,
        input.apiKeyHash,
        input.now,
      ]);
      return toAccount(row!);
    },
    async getAccount(id) {
      const [row] = await rows(q.SELECT_ACCOUNT, [id]);
      return row ? toAccount(row) : null;
    },
    async findAccountByApiKeyHash(hash) {
      const [row] = await rows(q.SELECT_ACCOUNT_BY_KEY_HASH, [hash]);
      return row ? toAccount(row) : null;
    },

    async createEndpoint(input) {
      const values = [
        input.id,
        input.accountId,
        input.url,
        JSON.stringify(input.events),
        input.secret,
        input.description,
        input.now,
      ];
      return toEndpoint((await rows(q.INSERT_ENDPOINT, values))[0]!);
    },
    async getEndpoint(accountId, id) {
      const [row] = await rows(q.SELECT_ENDPOINT, [id, accountId]);
      return row ? toEndpoint(row) : null;
    },
    async listEndpoints(accountId) {
      return (await rows(q.SELECT_ENDPOINTS_OF_ACCOUNT, [accountId])).map(toEndpoint);
    },
    async updateEndpoint(accountId, id, patch, now) {
      const [row] = await rows(q.UPDATE_ENDPOINT, [
        id,
        accountId,
        patch.url ?? null,
        patch.events === undefined ? null : JSON.stringify(patch.events),
        patch.secret ?? null,
        patch.description !== undefined,
        patch.description ?? null,
        now,
      ]);
      return row ? toEndpoint(row) : null;
    },
    async deleteEndpoint(accountId, id) {
      const [row] = await deadlockRetried(() => rows(q.DELETE_ENDPOINT, [id, accountId]));
      return Number(row?.n ?? 0) > 0;
    },

    async publish(event, nextId, target = {}) {
      return tx(async (client) => {
        await client.query(q.DURABLE_COMMIT);
        const body = Buffer.from(event.body.buffer, event.body.byteOffset, event.body.byteLength);
        await client.query(q.INSERT_EVENT, [event.id, event.accountId, event.name, body, event.createdAt]);
        const endpoints = (
          await client.query<{ id: string; enabled: boolean }>(q.LOCK_SUBSCRIBED_ENDPOINTS, [
            event.accountId,
            event.name,
          ])
        ).rows.filter((e) => target.endpointId === undefined || e.id === target.endpointId);
        const created = endpoints.map((endpoint): DeliveryRecord => newDelivery(event, endpoint, nextId()));
        if (created.length > 0) {
          await client.query(q.INSERT_DELIVERIES, [
            event.id,
            event.accountId,
            event.name,
            event.createdAt,
            created.map((d) => d.id),
            created.map((d) => d.endpointId),
            created.map((d) => d.status),
            created.map((d) => d.nextAttemptAt),
          ]);
        }
        if (created.some((d) => d.status === 'pending')) await client.query(q.NOTIFY_DUE, [schema]);
        return created;
      });
    },

    async claimDue({ now, limit, leaseMs, perEndpointCap, finishing = [] }) {
      if (limit <= 0 || perEndpointCap <= 0) return [];
      const claimed = await prepared('claim_due', q.CLAIM_DUE, [
        now,
        limit,
        perEndpointCap,
        leaseMs,
        claimWindow(limit, perEndpointCap),
        finishing.map((f) => f.deliveryId),
        finishing.map((f) => f.leaseToken),
      ]);
      return claimed.map(
        (row): ClaimedDelivery => ({
          delivery: toDelivery(row),
          leaseToken: row.lease_token as string,
          leaseExpiresAt: Number(row.lease_expires_at),
          body: new Uint8Array(row.body as Buffer),
          url: row.url as string,
          secret: row.secret as string,
        }),
      );
    },

    async recordAttempt({ claim, attempt, decision, policy, now }): Promise<AttemptApplied> {
      // Only an attempt that can move the endpoint towards disabling needs the read-decide-write
      // transaction below; the rest (nearly every attempt) is one statement.
      const cannotDisable =
        decision.status === 'delivered' || (policy.countPer === 'delivery' && decision.final !== 'failed');
      if (cannotDisable) {
        return recordFast({ claim, attempt, status: decision.status, attempts: decision.attempts, now });
      }
      return tx(async (client) => {
        // Endpoint first, then the delivery: the lock order of every transaction here.
        const endpointRow = await one(client, q.LOCK_ENDPOINT_OF_LEASED, [
          claim.deliveryId,
          claim.leaseToken,
        ]);
        if (!endpointRow) return { applied: false };
        // Compare-and-set (invariant 3): the lease must still be ours now that the row is locked.
        const deliveryRow = await one(client, q.LOCK_LEASED_DELIVERY, [claim.deliveryId, claim.leaseToken]);
        if (!deliveryRow) return { applied: false };
        const delivery = toDelivery(deliveryRow);
        const inserted = await client.query(q.INSERT_ATTEMPT, attemptValues(delivery.id, attempt));
        if (inserted.rowCount === 0) return { applied: false }; // invariant 4: nothing was written

        // Invariant 5: the failure count, the disabling and the holding commit with the attempt.
        const endpoint = toEndpoint(endpointRow);
        const verdict = decideEndpoint(endpoint.consecutiveFailures, decision, policy);
        if (verdict.consecutiveFailures !== endpoint.consecutiveFailures) {
          await client.query(q.SET_ENDPOINT_FAILURES, [endpoint.id, verdict.consecutiveFailures]);
        }
        let disabledEndpoint: EndpointRecord | undefined;
        if (verdict.disable && endpoint.enabled) {
          disabledEndpoint = toEndpoint((await one(client, q.DISABLE_ENDPOINT, [endpoint.id, now]))!);
          await client.query(q.HOLD_DELIVERIES, [endpoint.id, delivery.id, now]);
        }
        const enabled = endpoint.enabled && !disabledEndpoint;
        const status: DeliveryStatus =
          decision.status === 'awaiting_retry' && !enabled ? 'held' : decision.status;
        await client.query(q.FINISH_ATTEMPT, [
          delivery.id,
          status,
          decision.attempts,
          decision.nextAttemptAt,
          attempt.failureKind,
          attempt.statusCode,
          now,
        ]);
        await client.query(q.DELETE_LEASE, [delivery.id]);
        leasesEnded(1);
        return { applied: true, status, ...(disabledEndpoint ? { disabledEndpoint } : {}) };
      });
    },

    async releaseLease(deliveryId, leaseToken) {
      leasesEnded((await pool.query(q.RELEASE_LEASE, [deliveryId, leaseToken])).rowCount ?? 0);
    },

    async nextDueAt() {
      const [row] = await rows(q.NEXT_DUE, []);
      return row?.at === null || row?.at === undefined ? null : Number(row.at);
    },

    subscribe(wake) {
      return listener.subscribe(wake);
    },

    async reenableEndpoint(accountId, id, { replaySkipped, now }) {
      return tx(async (client) => {
        const row = await one(client, q.REENABLE_ENDPOINT, [id, accountId, now]);
        if (!row) return null;
        const resumed = (await client.query(q.RESUME_HELD, [id, now])).rowCount ?? 0;
        const replayed = replaySkipped
          ? ((await client.query(q.REPLAY_SKIPPED, [id, now])).rowCount ?? 0)
          : 0;
        await client.query(q.NOTIFY_DUE, [schema]);
        return { endpoint: toEndpoint(row), resumed, replayed };
      });
    },

    async retryNow(accountId, deliveryId, now): Promise<RetryNowResult> {
      return tx(async (client): Promise<RetryNowResult> => {
        const found = await one(client, q.SELECT_DELIVERY, [deliveryId, accountId]);
        if (!found) return { ok: false, reason: 'not_found' };
        const endpoint = await one(client, q.LOCK_ENDPOINT_SHARED, [found.endpoint_id]);
        if (!endpoint?.enabled) return { ok: false, reason: 'endpoint_disabled' };
        const locked = await one(client, q.LOCK_DELIVERY, [deliveryId, accountId]);
        if (!locked) return { ok: false, reason: 'not_found' };
        const lease = await one(client, q.SELECT_LEASE, [deliveryId]);
        if (lease && Number(lease.expires_at) > now) {
          return { ok: false, reason: 'in_flight' };
        }
        const updated = await one(client, q.RETRY_NOW, [deliveryId, now]);
        await client.query(q.NOTIFY_DUE, [schema]);
        return { ok: true, delivery: toDelivery(updated!) };
      });
    },

    async listDeliveries(accountId, filter) {
      const found = await rows(q.LIST_DELIVERIES, [
        accountId,
        filter.endpointId ?? null,
        filter.status ?? null,
        filter.event ?? null,
        filter.cursor ?? null,
        filter.limit + 1,
      ]);
      const items = found.slice(0, filter.limit).map(toDelivery);
      return { items, nextCursor: found.length > filter.limit ? items[items.length - 1]!.id : null };
    },
    async getDelivery(accountId, id) {
      const [row] = await rows(q.SELECT_DELIVERY, [id, accountId]);
      if (!row) return null;
      return { delivery: toDelivery(row), attempts: (await rows(q.SELECT_ATTEMPTS, [id])).map(toAttempt) };
    },
    async getEvent(accountId, id) {
      const [row] = await rows(q.SELECT_EVENT, [id, accountId]);
      if (!row) return null;
      return {
        id: row.id as string,
        accountId: row.account_id as string,
        name: row.name as string,
        body: new Uint8Array(row.body as Buffer),
        createdAt: Number(row.created_at),
      };
    },
    async pruneBefore(cutoff) {
      return tx(async (client) => {
        const removed = (await client.query(q.PRUNE_DELIVERIES, [cutoff])).rowCount ?? 0;
        await client.query(q.PRUNE_LEASES, []);
        await client.query(q.PRUNE_EVENTS, [cutoff]);
        return removed;
      });
    },
    async stats(): Promise<StoreStats> {
      const byStatus = ZERO_COUNTS();
      for (const r of await rows(q.COUNT_BY_STATUS, [])) byStatus[r.status as DeliveryStatus] = Number(r.n);
      const [disabled] = await rows(q.COUNT_DISABLED, []);
      return { byStatus, disabledEndpoints: Number(disabled?.n ?? 0) };
    },
  };
}
