/**
 * The store operations of day-to-day running, as one battery every store passes: pausing and
 * resuming (design D34), recovery (design D35), publishing with the platform's event id (design
 * D36), API keys and deleting an account (design D37).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashApiKey, newApiKey } from '../../src/accounts.js';
import { ATTEMPTS_KEPT } from '../../src/domain/attempts-kept.js';
import { DEFAULT_DISABLE_POLICY } from '../../src/domain/disable-rule.js';
import { newId } from '../../src/domain/ids.js';
import type { TransitionRules } from '../../src/domain/transition.js';
import type { SenderStore } from '../../src/store/port.js';
import type { ClaimedDelivery, EventRecord } from '../../src/store/records.js';
import { DEFAULT_RULES as RULES, recordAnswer } from './record-answer.js';

const T0 = Date.UTC(2026, 10, 22, 12);
const LEASE = 45_000;
const ONE_TRY: TransitionRules = { schedule: { delaysMs: [] }, policy: DEFAULT_DISABLE_POLICY };

export function operationsBattery(name: string, open: () => Promise<SenderStore>) {
  describe(`${name} store operations`, () => {
    let store: SenderStore;
    beforeEach(async () => {
      store = await open();
      await store.migrate();
    });
    afterEach(() => store.close());

    const account = () => newId('acct');
    const endpoint = (accountId: string) =>
      store.createEndpoint({
        id: newId('ep'),
        accountId,
        url: 'https://receiver.example.com/hook',
        events: ['click'],
        secret: 'whsec_test',
        description: null,
        now: T0,
      });
    const event = (accountId: string, at = T0, key?: string): EventRecord => ({
      id: newId('evt', at),
      accountId,
      name: 'click',
      body: Buffer.from('{"event":"click","timestamp":"2026-11-22T12:00:00Z","data":{}}'),
      createdAt: at,
      ...(key ? { idempotencyKey: key } : {}),
    });
    const publish = async (e: EventRecord) =>
      (await store.publish(e, () => newId('dlv', e.createdAt))).deliveries;
    const claim = (now = T0) => store.claimDue({ now, limit: 100, leaseMs: LEASE, perEndpointCap: 100 });
    const record = (c: ClaimedDelivery, ok: boolean, now: number, rules = RULES) =>
      recordAnswer(store, c, ok ? 200 : 500, now, { rules });
    const statusOf = async (a: string, id: string) => (await store.getDelivery(a, id))!.delivery.status;

    describe('pausing (design D34)', () => {
      it('holds what waits and what arrives, out of the claim, and resumes it at its due time', async () => {
        const a = account();
        const [paused, other] = [await endpoint(a), await endpoint(a)];
        await publish(event(a));
        expect(await store.pauseEndpoint(a, paused.id, T0 + 1)).toMatchObject({
          paused: true,
          pausedAt: T0 + 1,
        });
        const arrived = await publish(event(a, T0 + 2));
        expect(arrived.find((d) => d.endpointId === paused.id)?.status).toBe('held');
        expect(arrived.find((d) => d.endpointId === other.id)?.status).toBe('pending');
        const claimed = await claim(T0 + 10);
        expect(claimed.map((c) => c.delivery.endpointId)).toEqual([other.id, other.id]);
        expect((await store.stats()).queued.held).toBe(2);
        // Nothing counted against it.
        expect(await store.getEndpoint(a, paused.id)).toMatchObject({
          consecutiveFailures: 0,
          enabled: true,
        });
        // Pausing again changes nothing, not even the time it was paused.
        expect(await store.pauseEndpoint(a, paused.id, T0 + 20)).toMatchObject({ pausedAt: T0 + 1 });

        const resumed = await store.resumeEndpoint(a, paused.id, T0 + 30);
        expect(resumed).toMatchObject({ resumed: 2, endpoint: { paused: false, pausedAt: null } });
        expect((await claim(T0 + 30)).map((c) => c.delivery.endpointId)).toEqual([paused.id, paused.id]);
      });

      it('holds the retry of an attempt in flight at the pause; its success still counts', async () => {
        const a = account();
        const ep = await endpoint(a);
        const [first] = await publish(event(a));
        const [second] = await publish(event(a));
        const claimed = await claim();
        const [c1, c2] = [first, second].map((d) => claimed.find((c) => c.delivery.id === d!.id));
        await store.pauseEndpoint(a, ep.id, T0 + 1);
        expect(await record(c1!, false, T0 + 2)).toMatchObject({ applied: true, status: 'held' });
        expect(await record(c2!, true, T0 + 2)).toMatchObject({ applied: true, status: 'delivered' });
        expect(await statusOf(a, first!.id)).toBe('held');
        expect(await statusOf(a, second!.id)).toBe('delivered');
        expect(await claim(T0 + 3_600_000)).toEqual([]);
        // Resumed, the retry keeps its own due time: a minute after the failure, not at once.
        await store.resumeEndpoint(a, ep.id, T0 + 3);
        expect(await claim(T0 + 4)).toEqual([]);
        expect((await claim(T0 + 2 + 60_000)).map((c) => c.delivery.id)).toEqual([first!.id]);
      });

      it('refuses a manual retry while paused, and leaves another account’s endpoint alone', async () => {
        const a = account();
        const ep = await endpoint(a);
        const [d] = await publish(event(a));
        await store.pauseEndpoint(a, ep.id, T0);
        expect(await store.retryNow(a, d!.id, T0)).toEqual({ ok: false, reason: 'endpoint_paused' });
        expect(await store.pauseEndpoint(account(), ep.id, T0)).toBeNull();
        expect(await store.resumeEndpoint(account(), ep.id, T0)).toBeNull();
      });

      it('leaves nothing claimable of an endpoint disabled while publishes to it are made alongside', async () => {
        const a = account();
        await endpoint(a);
        await publish(event(a));
        const [c] = await claim();
        const rules = { ...ONE_TRY, policy: { ...DEFAULT_DISABLE_POLICY, threshold: 1 } };
        // Made together: on SQLite, one transaction, the record between the two publishes.
        const [[before], recorded, [after]] = await Promise.all([
          publish(event(a, T0 + 1)),
          record(c!, false, T0 + 1, rules),
          publish(event(a, T0 + 1)),
        ]);
        expect(recorded.disabledEndpoint).toBeDefined();
        for (const d of [before!, after!]) expect(['held', 'skipped']).toContain(await statusOf(a, d.id));
        expect(await claim(T0 + 86_400_000)).toEqual([]);
      });

      it('with disabling: skipped while disabled, re-enabling keeps a paused endpoint’s deliveries held', async () => {
        const a = account();
        const ep = await endpoint(a);
        const [d] = await publish(event(a));
        const [c] = await claim();
        // One attempt with no retries left, threshold 1: the endpoint is disabled.
        const rules = { ...ONE_TRY, policy: { ...DEFAULT_DISABLE_POLICY, threshold: 1 } };
        expect((await record(c!, false, T0 + 1, rules)).disabledEndpoint).toBeDefined();
        const [waiting] = await publish(event(a, T0 + 2));
        expect(waiting!.status).toBe('skipped');
        await store.pauseEndpoint(a, ep.id, T0 + 3);
        const [arrived] = await publish(event(a, T0 + 4));
        expect(arrived!.status).toBe('skipped'); // disabled wins
        expect((await store.resumeEndpoint(a, ep.id, T0 + 5))!.resumed).toBe(0);
        await store.pauseEndpoint(a, ep.id, T0 + 6);
        const reenabled = await store.reenableEndpoint(a, ep.id, { replaySkipped: true, now: T0 + 7 });
        expect(reenabled).toMatchObject({
          resumed: 0,
          replayed: 2,
          endpoint: { enabled: true, paused: true },
        });
        expect(await statusOf(a, arrived!.id)).toBe('held');
        expect(await claim(T0 + 8)).toEqual([]);
        expect((await store.resumeEndpoint(a, ep.id, T0 + 9))!.resumed).toBe(2);
        expect((await claim(T0 + 9)).map((x) => x.delivery.id).sort()).toEqual(
          [waiting!.id, arrived!.id].sort(),
        );
        expect(await statusOf(a, d!.id)).toBe('failed');
      });
    });

    describe('recovery (design D35)', () => {
      async function failedDeliveries(a: string, times: number[]) {
        const ep = await endpoint(a);
        const ids: string[] = [];
        for (const at of times) ids.push((await publish(event(a, at)))[0]!.id);
        for (const c of await claim(Math.max(...times))) await record(c, false, Math.max(...times), ONE_TRY);
        return { ep, ids };
      }

      it('re-queues failed deliveries created in the range, oldest first, a bounded number a call', async () => {
        const a = account();
        const { ep, ids } = await failedDeliveries(a, [T0, T0 + 10, T0 + 20, T0 + 30, T0 + 40]);
        const range = { since: T0 + 10, until: T0 + 40, now: T0 + 100 };
        const left = (atMost: number) =>
          store.countFailedDeliveries(ep.id, { since: range.since, until: range.until, atMost });
        // Counted up to a bound: 3 in the range, 2 when asked for no more.
        expect([await left(10), await left(2)]).toEqual([3, 2]);
        expect(await store.recoverDeliveries(a, ep.id, { ...range, limit: 2 })).toEqual({
          ok: true,
          recovered: 2,
        });
        expect(await left(10)).toBe(1);
        expect(await statusOf(a, ids[1]!)).toBe('awaiting_retry');
        expect(await statusOf(a, ids[2]!)).toBe('awaiting_retry');
        expect(await statusOf(a, ids[3]!)).toBe('failed');
        expect(await store.recoverDeliveries(a, ep.id, { ...range, limit: 2 })).toEqual({
          ok: true,
          recovered: 1,
        });
        expect(await left(10)).toBe(0);
        // Outside the range: untouched.
        expect(await statusOf(a, ids[0]!)).toBe('failed');
        expect(await statusOf(a, ids[4]!)).toBe('failed');
        // One more attempt each, due now, the count continuing; a failure makes it failed again.
        const claimed = await claim(T0 + 100);
        expect(claimed.map((c) => c.delivery.id).sort()).toEqual([ids[1], ids[2], ids[3]].sort());
        const [second, third] = [ids[1], ids[2]].map((id) => claimed.find((c) => c.delivery.id === id)!);
        expect(second!.delivery.attempts).toBe(1);
        expect(await record(second!, false, T0 + 101, ONE_TRY)).toMatchObject({ status: 'failed' });
        expect(await record(third!, true, T0 + 101, ONE_TRY)).toMatchObject({ status: 'delivered' });
      });

      it('keeps a delivery recovered again and again to its latest attempts', async () => {
        const a = account();
        const ep = await endpoint(a);
        const [d] = await publish(event(a));
        // ATTEMPTS_KEPT failed attempts, each recovered by hand but the last; never disabling.
        const lastTry = { ...ONE_TRY, policy: { ...DEFAULT_DISABLE_POLICY, threshold: 10 * ATTEMPTS_KEPT } };
        let at = T0;
        for (let n = 1; n <= ATTEMPTS_KEPT; n++) {
          const [c] = await claim(at);
          expect(await record(c!, false, at, lastTry)).toMatchObject({ status: 'failed' });
          at += 1_000;
          if (n < ATTEMPTS_KEPT)
            expect(
              await store.recoverDeliveries(a, ep.id, { since: T0, until: T0 + 1, now: at, limit: 10 }),
            ).toMatchObject({ recovered: 1 });
        }
        const kept = async () => (await store.getDelivery(a, d!.id))!.attempts.map((x) => x.number);
        expect(await kept()).toEqual(Array.from({ length: ATTEMPTS_KEPT }, (_, i) => i + 1));
        // One more recovery makes room for the attempt it schedules: the oldest goes.
        await store.recoverDeliveries(a, ep.id, { since: T0, until: T0 + 1, now: at, limit: 10 });
        expect(await kept()).toEqual(Array.from({ length: ATTEMPTS_KEPT - 1 }, (_, i) => i + 2));
        const [c] = await claim(at);
        expect(c!.delivery.attempts).toBe(ATTEMPTS_KEPT);
        await record(c!, true, at, lastTry);
        expect(await kept()).toEqual(Array.from({ length: ATTEMPTS_KEPT }, (_, i) => i + 2));
      });

      it('answers why it cannot: another account’s endpoint, a disabled one, a paused one', async () => {
        const a = account();
        const { ep } = await failedDeliveries(a, [T0]);
        const request = { since: T0, until: T0 + 1, now: T0 + 5, limit: 10 };
        expect(await store.recoverDeliveries(account(), ep.id, request)).toEqual({
          ok: false,
          reason: 'not_found',
        });
        await store.pauseEndpoint(a, ep.id, T0 + 2);
        expect(await store.recoverDeliveries(a, ep.id, request)).toEqual({
          ok: false,
          reason: 'endpoint_paused',
        });
        const b = account();
        const disabled = await endpoint(b);
        await publish(event(b, T0 + 1));
        const rules = { ...ONE_TRY, policy: { ...DEFAULT_DISABLE_POLICY, threshold: 1 } };
        for (const c of await claim(T0 + 1)) await record(c, false, T0 + 1, rules);
        expect((await store.getEndpoint(b, disabled.id))!.enabled).toBe(false);
        expect(await store.recoverDeliveries(b, disabled.id, request)).toEqual({
          ok: false,
          reason: 'endpoint_disabled',
        });
      });
    });

    describe('the platform’s event id (design D36)', () => {
      it('stores a repeat of a key once per account, and answers the first publish', async () => {
        const [a, b] = [account(), account()];
        await endpoint(a);
        await endpoint(b);
        const first = await store.publish(event(a, T0, 'platform-1'), () => newId('dlv'));
        expect(first).toMatchObject({ duplicate: false });
        expect(first.deliveries).toHaveLength(1);
        const again = await store.publish(event(a, T0 + 5, 'platform-1'), () => newId('dlv'));
        expect(again).toEqual({ eventId: first.eventId, deliveries: first.deliveries, duplicate: true });
        // Another account's key of the same name is its own.
        const other = await store.publish(event(b, T0, 'platform-1'), () => newId('dlv'));
        expect(other.duplicate).toBe(false);
        expect((await store.listDeliveries(a, { limit: 10 })).items).toHaveLength(1);
      });

      it('stores one event of 20 concurrent publishes of one key', async () => {
        const a = account();
        await endpoint(a);
        await endpoint(a);
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) => store.publish(event(a, T0 + i, 'burst'), () => newId('dlv'))),
        );
        expect(new Set(results.map((r) => r.eventId)).size).toBe(1);
        expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
        expect((await store.listDeliveries(a, { limit: 100 })).items).toHaveLength(2);
      });
    });

    describe('API keys and accounts (design D37)', () => {
      const newAccount = async () => {
        const { apiKey, key } = newApiKey(T0);
        const created = await store.createAccount({
          id: newId('acct'),
          name: 'Acme',
          plan: 'business',
          apiKeyHash: key.hash,
          apiKeyId: key.id,
          apiKeyPrefix: key.prefix,
          now: T0,
        });
        return { account: created, apiKey, keyId: key.id };
      };

      it('rotates with a grace, revokes, and notes when a key was used', async () => {
        const { account: acct, apiKey, keyId } = await newAccount();
        expect(await store.listApiKeys(acct.id)).toMatchObject([{ id: keyId, prefix: apiKey.slice(0, 12) }]);
        expect((await store.findApiKey(hashApiKey(apiKey), T0))?.account.id).toBe(acct.id);
        await store.touchApiKey(keyId, T0 + 5);
        const { key } = newApiKey(T0 + 10);
        const rotated = await store.rotateApiKey(acct.id, key, { now: T0 + 10, expireOthersAt: T0 + 1_000 });
        expect(rotated?.others).toMatchObject([{ id: keyId, expiresAt: T0 + 1_000, lastUsedAt: T0 + 5 }]);
        expect(await store.findApiKey(hashApiKey(apiKey), T0 + 999)).not.toBeNull();
        expect(await store.findApiKey(hashApiKey(apiKey), T0 + 1_000)).toBeNull();
        expect((await store.findApiKey(key.hash, T0 + 1_000))?.key.id).toBe(key.id);
        expect(await store.getApiKey(key.id, T0 + 2_000)).not.toBeNull();
        expect(await store.revokeApiKey(acct.id, key.id, T0 + 2_000)).toMatchObject({
          revokedAt: T0 + 2_000,
        });
        expect(await store.findApiKey(key.hash, T0 + 2_001)).toBeNull();
        expect(await store.getApiKey(key.id, T0 + 2_001)).toBeNull();
        expect(await store.revokeApiKey(account(), key.id, T0)).toBeNull();
        expect(
          await store.rotateApiKey(account(), newApiKey(T0).key, { now: T0, expireOthersAt: T0 }),
        ).toBeNull();
      });

      it('deletes an account in bounded steps: its keys stop first, other accounts keep theirs', async () => {
        const doomed = await newAccount();
        const kept = await newAccount();
        for (const [a, at] of [
          [doomed.account.id, T0],
          [kept.account.id, T0 + 100],
        ] as const) {
          await endpoint(a);
          for (let i = 0; i < 5; i++) await publish(event(a, at + i));
        }
        // One of the deleted account's deliveries is in flight while it goes.
        const [leased] = await store.claimDue({ now: T0 + 10, limit: 1, leaseMs: LEASE, perEndpointCap: 10 });
        expect(leased?.delivery.accountId).toBe(doomed.account.id);
        expect(await store.markAccountDeleted(doomed.account.id, T0 + 20)).toBe(true);
        expect(await store.getAccount(doomed.account.id)).toBeNull();
        expect(await store.findApiKey(hashApiKey(doomed.apiKey), T0 + 20)).toBeNull();
        const steps: number[] = [];
        for (let n = await store.deleteAccountStep(doomed.account.id, 2); n > 0; ) {
          steps.push(n);
          n = await store.deleteAccountStep(doomed.account.id, 2);
        }
        expect(steps).toEqual([2, 2, 1, 2, 2, 1, 3]); // deliveries, events, then endpoint + key + account
        expect(await store.markAccountDeleted(doomed.account.id, T0 + 30)).toBe(false);
        expect(await store.listEndpoints(doomed.account.id)).toEqual([]);
        expect((await store.listDeliveries(doomed.account.id, { limit: 10 })).items).toEqual([]);
        expect(await store.listApiKeys(doomed.account.id)).toEqual([]);
        // The other account is whole, and the claim goes on without the deleted one's deliveries.
        expect((await store.listDeliveries(kept.account.id, { limit: 10 })).items).toHaveLength(5);
        expect((await store.findApiKey(hashApiKey(kept.apiKey), T0 + 30))?.account.id).toBe(kept.account.id);
        const next = await claim(T0 + 200);
        expect(next.map((c) => c.delivery.accountId)).toEqual(Array(5).fill(kept.account.id));
        expect(await record(leased!, true, T0 + 40)).toEqual({ applied: false });
        expect((await store.listAccounts({ limit: 10 })).items.map((x) => x.id)).toContain(kept.account.id);
        expect((await store.listAccounts({ limit: 10 })).items.map((x) => x.id)).not.toContain(
          doomed.account.id,
        );
      });
    });
  });
}
