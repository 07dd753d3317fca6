/**
 * The in-memory store: for tests and trials. It keeps every invariant of the port within one
 * process (each method runs to completion without awaiting, so it is atomic), but nothing
 * survives a restart.
 */

import { type DeliveryStatus, resumeStatus } from '../domain/delivery-state.js';
import { decideEndpoint } from '../domain/disable-rule.js';
import { leaseKey, newLeaseToken } from './lease.js';
import { newDelivery } from './new-delivery.js';
import { pickDue } from './pick-due.js';
import type { Page, SenderStore, StoreStats } from './port.js';
import type { AccountRecord, AttemptRecord, DeliveryRecord, EndpointRecord, EventRecord } from './records.js';

interface Lease {
  token: string;
  expiresAt: number;
}

const CLAIMABLE: ReadonlySet<DeliveryStatus> = new Set(['pending', 'awaiting_retry']);
const FINAL: ReadonlySet<DeliveryStatus> = new Set(['delivered', 'failed', 'skipped']);

export function createMemoryStore(): SenderStore {
  const endpoints = new Map<string, EndpointRecord>();
  const events = new Map<string, EventRecord>();
  const deliveries = new Map<string, DeliveryRecord>();
  const leases = new Map<string, Lease>();
  const attempts = new Map<string, AttemptRecord[]>();
  const accounts = new Map<string, AccountRecord>();

  const copy = <T extends object>(value: T): T => structuredClone(value);
  const owned = (accountId: string, endpointId: string) => {
    const endpoint = endpoints.get(endpointId);
    return endpoint && endpoint.accountId === accountId ? endpoint : undefined;
  };
  const leased = (id: string, now: number) => {
    const lease = leases.get(id);
    return lease !== undefined && lease.expiresAt > now;
  };

  return {
    kind: 'memory',
    async migrate() {},
    async close() {},

    async createAccount(input) {
      if ([...accounts.values()].some((a) => a.apiKeyHash === input.apiKeyHash)) {
        throw new Error('an account with this API key hash exists already');
      }
      const account: AccountRecord = {
        id: input.id,
        name: input.name,
        plan: input.plan,
        apiKeyHash: input.apiKeyHash,
        createdAt: input.now,
      };
      accounts.set(account.id, account);
      return copy(account);
    },
    async getAccount(id) {
      const account = accounts.get(id);
      return account ? copy(account) : null;
    },
    async findAccountByApiKeyHash(hash) {
      const account = [...accounts.values()].find((a) => a.apiKeyHash === hash);
      return account ? copy(account) : null;
    },

    async createEndpoint(input) {
      const endpoint: EndpointRecord = {
        id: input.id,
        accountId: input.accountId,
        url: input.url,
        events: [...input.events],
        secret: input.secret,
        description: input.description,
        enabled: true,
        consecutiveFailures: 0,
        disabledReason: null,
        disabledAt: null,
        createdAt: input.now,
        updatedAt: input.now,
      };
      endpoints.set(endpoint.id, endpoint);
      return copy(endpoint);
    },
    async getEndpoint(accountId, id) {
      const endpoint = owned(accountId, id);
      return endpoint ? copy(endpoint) : null;
    },
    async listEndpoints(accountId) {
      return [...endpoints.values()].filter((e) => e.accountId === accountId).map(copy);
    },
    async updateEndpoint(accountId, id, patch, now) {
      const endpoint = owned(accountId, id);
      if (!endpoint) return null;
      if (patch.url !== undefined) endpoint.url = patch.url;
      if (patch.events !== undefined) endpoint.events = [...patch.events];
      if (patch.secret !== undefined) endpoint.secret = patch.secret;
      if (patch.description !== undefined) endpoint.description = patch.description;
      endpoint.updatedAt = now;
      return copy(endpoint);
    },
    async deleteEndpoint(accountId, id) {
      if (!owned(accountId, id)) return false;
      endpoints.delete(id);
      for (const [deliveryId, d] of deliveries) {
        if (d.endpointId !== id) continue;
        deliveries.delete(deliveryId);
        leases.delete(deliveryId);
        attempts.delete(deliveryId);
      }
      return true;
    },

    async publish(event, deliveryId, target = {}) {
      const created: DeliveryRecord[] = [];
      for (const endpoint of endpoints.values()) {
        if (endpoint.accountId !== event.accountId || !endpoint.events.includes(event.name as never))
          continue;
        if (target.endpointId !== undefined && endpoint.id !== target.endpointId) continue;
        created.push(newDelivery(event, endpoint, deliveryId()));
      }
      events.set(event.id, { ...event, body: event.body.slice() });
      for (const d of created) deliveries.set(d.id, d);
      return created.map(copy);
    },

    async claimDue({ now, limit, leaseMs, perEndpointCap, finishing = [] }) {
      const done = new Set(finishing.map((f) => leaseKey(f.deliveryId, f.leaseToken)));
      const inFlight = new Map<string, number>();
      for (const [id, d] of deliveries) {
        if (leased(id, now) && !done.has(leaseKey(id, leases.get(id)!.token)))
          inFlight.set(d.endpointId, (inFlight.get(d.endpointId) ?? 0) + 1);
      }
      const due = [...deliveries.values()]
        .filter(
          (d) =>
            CLAIMABLE.has(d.status) &&
            d.nextAttemptAt !== null &&
            d.nextAttemptAt <= now &&
            !leased(d.id, now) &&
            endpoints.get(d.endpointId)!.enabled,
        )
        .sort((a, b) => a.nextAttemptAt! - b.nextAttemptAt! || (a.id < b.id ? -1 : 1));
      return pickDue(due, (d) => d.endpointId, inFlight, perEndpointCap, limit).map((d) => {
        const lease = { token: newLeaseToken(), expiresAt: now + leaseMs };
        leases.set(d.id, lease);
        const endpoint = endpoints.get(d.endpointId)!;
        return {
          delivery: copy(d),
          leaseToken: lease.token,
          leaseExpiresAt: lease.expiresAt,
          body: events.get(d.eventId)!.body.slice(),
          url: endpoint.url,
          secret: endpoint.secret,
        };
      });
    },

    async recordAttempt({ claim, attempt, decision, policy, now }) {
      const lease = leases.get(claim.deliveryId);
      const delivery = deliveries.get(claim.deliveryId);
      if (!delivery || !lease || lease.token !== claim.leaseToken) return { applied: false };
      const list = attempts.get(delivery.id) ?? [];
      if (list.some((a) => a.number === attempt.number)) return { applied: false };
      list.push(copy(attempt));
      attempts.set(delivery.id, list);
      leases.delete(delivery.id);

      const endpoint = endpoints.get(delivery.endpointId)!;
      const verdict = decideEndpoint(endpoint.consecutiveFailures, decision, policy);
      endpoint.consecutiveFailures = verdict.consecutiveFailures;
      let disabledEndpoint: EndpointRecord | undefined;
      if (verdict.disable && endpoint.enabled) {
        endpoint.enabled = false;
        endpoint.disabledReason = 'consecutive_failures';
        endpoint.disabledAt = now;
        for (const other of deliveries.values()) {
          if (other.endpointId === endpoint.id && CLAIMABLE.has(other.status) && other.id !== delivery.id) {
            other.status = 'held';
            other.updatedAt = now;
          }
        }
        disabledEndpoint = copy(endpoint);
      }
      delivery.attempts = decision.attempts;
      delivery.status = decision.status === 'awaiting_retry' && !endpoint.enabled ? 'held' : decision.status;
      delivery.nextAttemptAt = decision.nextAttemptAt;
      delivery.lastFailureKind = attempt.failureKind;
      delivery.lastStatusCode = attempt.statusCode;
      delivery.updatedAt = now;
      return { applied: true, status: delivery.status, ...(disabledEndpoint ? { disabledEndpoint } : {}) };
    },

    async releaseLease(deliveryId, token) {
      if (leases.get(deliveryId)?.token === token) leases.delete(deliveryId);
    },

    async nextDueAt() {
      let next: number | null = null;
      for (const d of deliveries.values()) {
        if (!CLAIMABLE.has(d.status) || d.nextAttemptAt === null) continue;
        if (!endpoints.get(d.endpointId)?.enabled) continue;
        const at = Math.max(d.nextAttemptAt, leases.get(d.id)?.expiresAt ?? 0);
        if (next === null || at < next) next = at;
      }
      return next;
    },

    async reenableEndpoint(accountId, id, { replaySkipped, now }) {
      const endpoint = owned(accountId, id);
      if (!endpoint) return null;
      endpoint.enabled = true;
      endpoint.consecutiveFailures = 0;
      endpoint.disabledReason = null;
      endpoint.disabledAt = null;
      endpoint.updatedAt = now;
      let resumed = 0;
      let replayed = 0;
      for (const d of deliveries.values()) {
        if (d.endpointId !== id) continue;
        if (d.status === 'held' || (replaySkipped && d.status === 'skipped')) {
          if (d.status === 'held') resumed++;
          else replayed++;
          d.status = resumeStatus(d.attempts);
          d.nextAttemptAt = now;
          d.updatedAt = now;
        }
      }
      return { endpoint: copy(endpoint), resumed, replayed };
    },

    async retryNow(accountId, deliveryId, now) {
      const d = deliveries.get(deliveryId);
      if (!d || d.accountId !== accountId) return { ok: false, reason: 'not_found' };
      if (!endpoints.get(d.endpointId)?.enabled) return { ok: false, reason: 'endpoint_disabled' };
      if (leased(d.id, now)) return { ok: false, reason: 'in_flight' };
      d.status = resumeStatus(d.attempts);
      d.nextAttemptAt = now;
      d.updatedAt = now;
      return { ok: true, delivery: copy(d) };
    },

    async listDeliveries(accountId, filter): Promise<Page<DeliveryRecord>> {
      const items = [...deliveries.values()]
        .filter(
          (d) =>
            d.accountId === accountId &&
            (filter.endpointId === undefined || d.endpointId === filter.endpointId) &&
            (filter.status === undefined || d.status === filter.status) &&
            (filter.event === undefined || d.eventName === filter.event) &&
            (filter.cursor === undefined || d.id < filter.cursor),
        )
        .sort((a, b) => (a.id < b.id ? 1 : -1));
      const page = items.slice(0, filter.limit).map(copy);
      return { items: page, nextCursor: items.length > filter.limit ? page[page.length - 1]!.id : null };
    },
    async getDelivery(accountId, id) {
      const d = deliveries.get(id);
      if (!d || d.accountId !== accountId) return null;
      const list = (attempts.get(id) ?? []).slice().sort((a, b) => a.number - b.number);
      return { delivery: copy(d), attempts: list.map(copy) };
    },
    async getEvent(accountId, id) {
      const e = events.get(id);
      return e && e.accountId === accountId ? { ...e, body: e.body.slice() } : null;
    },
    async pruneBefore(cutoff) {
      let removed = 0;
      for (const [id, d] of deliveries) {
        if (FINAL.has(d.status) && d.updatedAt < cutoff) {
          deliveries.delete(id);
          attempts.delete(id);
          removed++;
        }
      }
      const live = new Set([...deliveries.values()].map((d) => d.eventId));
      for (const [id, e] of events) if (!live.has(id) && e.createdAt < cutoff) events.delete(id);
      return removed;
    },
    async stats(): Promise<StoreStats> {
      const byStatus = { pending: 0, awaiting_retry: 0, delivered: 0, failed: 0, held: 0, skipped: 0 };
      for (const d of deliveries.values()) byStatus[d.status]++;
      const disabledEndpoints = [...endpoints.values()].filter((e) => !e.enabled).length;
      return { byStatus, disabledEndpoints };
    },
  };
}
