/**
 * The conformance battery for what an endpoint and a delivery carry beyond the invariants: the
 * Standard Webhooks switch (design D32), a rotation's previous secret and its grace (design D38),
 * encrypted at rest through the store decorator (design D18), test deliveries (design D42), and
 * what a receiver's answer asks of the record (design D40, D41). Run against every store.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import { decideTransition, type TransitionRules } from '../../src/domain/transition.js';
import { withSecretCipher } from '../../src/store/encrypted-secrets.js';
import type { SenderStore } from '../../src/store/port.js';
import type { ClaimedDelivery, EventRecord } from '../../src/store/records.js';
import { createSecretCipher, isEncryptedSecret } from '../../src/store/secret-cipher.js';
import { DEFAULT_RULES as RULES, recordAnswer } from './record-answer.js';

const T0 = Date.UTC(2026, 10, 22, 12);
const HOUR = 60 * 60_000;
const GONE_RULES: TransitionRules = { ...RULES, receiver: { honourRetryAfter: true, disableOnGone: true } };

export function endpointOptionsBattery(
  name: string,
  open: () => Promise<SenderStore>,
  close?: (store: SenderStore) => Promise<void>,
) {
  describe(`${name} store: endpoint options, rotation and receiver answers`, () => {
    let store: SenderStore;
    beforeEach(async () => {
      store = await open();
      await store.migrate();
    });
    afterEach(async () => {
      if (close) await close(store);
      else await store.close();
    });

    const endpoint = (s: SenderStore, accountId: string, options: { standardWebhooks?: boolean } = {}) =>
      s.createEndpoint({
        id: newId('ep'),
        accountId,
        url: 'https://receiver.example.com/hook',
        events: ['click'],
        secret: 'whsec_first',
        description: null,
        now: T0,
        ...options,
      });
    const event = (accountId: string, at = T0): EventRecord => ({
      id: newId('evt', at),
      accountId,
      name: 'click',
      body: Buffer.from('{"event":"click","timestamp":"2026-11-22T12:00:00Z","data":{}}'),
      createdAt: at,
    });
    const claim = (s: SenderStore, now: number) =>
      s.claimDue({ now, limit: 100, leaseMs: 45_000, perEndpointCap: 100 });
    const answer = (
      c: ClaimedDelivery,
      statusCode: number,
      now: number,
      rules: TransitionRules,
      retryAfter: string | null = null,
    ) => recordAnswer(store, c, statusCode, now, { rules, retryAfter });

    it('keeps the Standard Webhooks switch, off by default, and changes it alone', async () => {
      const a = newId('acct');
      const off = await endpoint(store, a);
      const on = await endpoint(store, a, { standardWebhooks: true });
      expect(off.standardWebhooks).toBe(false);
      expect(on.standardWebhooks).toBe(true);
      const patched = await store.updateEndpoint(a, off.id, { standardWebhooks: true }, T0 + 1);
      expect(patched).toMatchObject({ standardWebhooks: true, secret: 'whsec_first', url: off.url });
      await store.updateEndpoint(a, off.id, { description: 'x' }, T0 + 2);
      expect((await store.getEndpoint(a, off.id))?.standardWebhooks).toBe(true);
      await store.publish(event(a), () => newId('dlv'));
      const claims = await claim(store, T0);
      expect(new Map(claims.map((c) => [c.delivery.endpointId, c.standardWebhooks]))).toEqual(
        new Map([
          [off.id, true],
          [on.id, true],
        ]),
      );
    });

    it('keeps the replaced secret until its grace ends, hands it out only before, then drops it (design D38)', async () => {
      const a = newId('acct');
      const ep = await endpoint(store, a);
      const rotated = await store.updateEndpoint(
        a,
        ep.id,
        { secret: 'whsec_second', previousSecretExpiresAt: T0 + HOUR },
        T0,
      );
      expect(rotated).toMatchObject({
        secret: 'whsec_second',
        previousSecret: 'whsec_first',
        previousSecretExpiresAt: T0 + HOUR,
      });
      // A patch of anything else keeps the rotation as it is.
      await store.updateEndpoint(a, ep.id, { description: 'kept' }, T0 + 1);
      expect(await store.getEndpoint(a, ep.id)).toMatchObject({ previousSecret: 'whsec_first' });

      await store.publish(event(a), () => newId('dlv'));
      const [during] = await claim(store, T0 + HOUR - 1);
      expect(during).toMatchObject({ secret: 'whsec_second', previousSecret: 'whsec_first' });
      await store.releaseLease(during!.delivery.id, during!.leaseToken);
      // At the expiry, never again, even before the row is cleaned.
      const [after] = await claim(store, T0 + HOUR);
      expect(after).toMatchObject({ secret: 'whsec_second', previousSecret: null });
      await store.releaseLease(after!.delivery.id, after!.leaseToken);

      expect(await store.dropExpiredSecrets(T0 + HOUR - 1)).toBe(0);
      expect((await store.getEndpoint(a, ep.id))?.previousSecret).toBe('whsec_first');
      expect(await store.dropExpiredSecrets(T0 + HOUR)).toBe(1);
      expect(await store.getEndpoint(a, ep.id)).toMatchObject({
        secret: 'whsec_second',
        previousSecret: null,
        previousSecretExpiresAt: null,
      });
    });

    it('replaces the previous secret on a second rotation, and drops it on a rotation without grace', async () => {
      const a = newId('acct');
      const ep = await endpoint(store, a);
      await store.updateEndpoint(
        a,
        ep.id,
        { secret: 'whsec_second', previousSecretExpiresAt: T0 + HOUR },
        T0,
      );
      const again = await store.updateEndpoint(
        a,
        ep.id,
        { secret: 'whsec_third', previousSecretExpiresAt: T0 + 2 * HOUR },
        T0 + 1,
      );
      expect(again).toMatchObject({ secret: 'whsec_third', previousSecret: 'whsec_second' });
      const now = await store.updateEndpoint(a, ep.id, { secret: 'whsec_fourth' }, T0 + 2);
      expect(now).toMatchObject({
        secret: 'whsec_fourth',
        previousSecret: null,
        previousSecretExpiresAt: null,
      });
    });

    it('stores both secrets encrypted through the decorator, bound to their endpoint (design D18)', async () => {
      const sealed = withSecretCipher(store, createSecretCipher(randomBytes(32)));
      const a = newId('acct');
      const ep = await endpoint(sealed, a);
      await sealed.updateEndpoint(
        a,
        ep.id,
        { secret: 'whsec_second', previousSecretExpiresAt: T0 + HOUR },
        T0,
      );
      const raw = (await store.getEndpoint(a, ep.id))!;
      expect(isEncryptedSecret(raw.secret)).toBe(true);
      expect(isEncryptedSecret(raw.previousSecret!)).toBe(true);
      expect(await sealed.getEndpoint(a, ep.id)).toMatchObject({
        secret: 'whsec_second',
        previousSecret: 'whsec_first',
      });
      expect((await sealed.listEndpoints(a))[0]).toMatchObject({ previousSecret: 'whsec_first' });
      await sealed.publish(event(a), () => newId('dlv'));
      const [c] = await claim(sealed, T0);
      expect(c).toMatchObject({ secret: 'whsec_second', previousSecret: 'whsec_first' });
    });

    it('pages and replaces a previous secret for sealing, compare-and-set with the secret (design D30, D38)', async () => {
      const a = newId('acct');
      const ep = await endpoint(store, a);
      const sealed = 'lhenc:v2:k1:';
      const plain = await endpoint(store, a);
      await store.replaceSecrets([{ id: plain.id, from: 'whsec_first', to: `${sealed}plain` }]);
      await store.updateEndpoint(
        a,
        ep.id,
        { secret: `${sealed}second`, previousSecretExpiresAt: T0 + HOUR },
        T0,
      );
      // Its secret is sealed, its previous one is not: it is still to do; the other is done.
      expect(await store.secretsNotSealedWith(sealed, null, 10)).toEqual([
        { id: ep.id, secret: `${sealed}second`, previousSecret: 'whsec_first' },
      ]);
      const change = { id: ep.id, from: `${sealed}second`, to: `${sealed}second` };
      expect(
        await store.replaceSecrets([{ ...change, previous: { from: 'whsec_other', to: `${sealed}first` } }]),
      ).toEqual([]);
      expect(
        await store.replaceSecrets([{ ...change, previous: { from: 'whsec_first', to: `${sealed}first` } }]),
      ).toEqual([ep.id]);
      expect(await store.getEndpoint(a, ep.id)).toMatchObject({
        secret: `${sealed}second`,
        previousSecret: `${sealed}first`,
        previousSecretExpiresAt: T0 + HOUR,
      });
      expect(await store.secretsNotSealedWith(sealed, null, 10)).toEqual([]);
    });

    it('marks a test delivery, in the log and in the claim (design D42)', async () => {
      const a = newId('acct');
      const ep = await endpoint(store, a);
      const {
        deliveries: [test],
      } = await store.publish(event(a), () => newId('dlv'), { endpointId: ep.id, test: true });
      const {
        deliveries: [plain],
      } = await store.publish(event(a, T0 + 1), () => newId('dlv'));
      expect(test?.test).toBe(true);
      expect(plain?.test).toBe(false);
      expect((await store.getDelivery(a, test!.id))?.delivery.test).toBe(true);
      const log = await store.listDeliveries(a, { limit: 10 });
      expect(new Map(log.items.map((d) => [d.id, d.test]))).toEqual(
        new Map([
          [test!.id, true],
          [plain!.id, false],
        ]),
      );
      const claims = await claim(store, T0 + 1);
      expect(new Map(claims.map((c) => [c.delivery.id, c.delivery.test]))).toEqual(
        new Map([
          [test!.id, true],
          [plain!.id, false],
        ]),
      );
    });

    it('schedules a 429 or 503 retry no earlier than Retry-After asks, capped (design D40)', async () => {
      const a = newId('acct');
      await endpoint(store, a);
      await store.publish(event(a), () => newId('dlv'));
      // Scheduled 1 m, 5 m, 30 m; asked 10 m, 27.8 h (capped at 8 h), and an hour on a 500 (not heeded).
      const cases = [
        [429, '600', 600_000],
        [503, '99999', 8 * HOUR],
        [500, '3600', 30 * 60_000],
      ] as const;
      let now = T0;
      for (const [status, retryAfter, delay] of cases) {
        const [c] = await claim(store, now);
        const t = decideTransition(
          { attemptsBefore: c!.delivery.attempts, endpoint: { enabled: true, consecutiveFailures: 0 } },
          { succeeded: false, finishedAt: now, statusCode: status, retryAfter },
          RULES,
        );
        expect(t.delivery.nextAttemptAt).toBe(now + delay);
        const applied = await answer(c!, status, now, RULES, retryAfter);
        expect(applied).toMatchObject({
          applied: true,
          status: 'awaiting_retry',
          nextAttemptAt: now + delay,
        });
        expect(await claim(store, now + delay - 1)).toEqual([]);
        now += delay;
      }
      const [last] = await claim(store, now);
      expect(last?.delivery.attempts).toBe(3);
    });

    it('disables at a 410 under the gone policy, reason gone, holding the rest (design D41)', async () => {
      const a = newId('acct');
      const ep = await endpoint(store, a);
      const kept = await endpoint(store, a);
      await store.publish(event(a), () => newId('dlv'));
      await store.publish(event(a, T0 + 5), () => newId('dlv'));
      const claims = await claim(store, T0 + 5);
      const first = claims.find((c) => c.delivery.endpointId === ep.id)!;
      const other = claims.find((c) => c.delivery.endpointId === kept.id)!;
      // Without the policy, a 410 is one failure like any other.
      const plain = await answer(other, 410, T0 + 10, RULES);
      expect(plain).toMatchObject({ applied: true, status: 'awaiting_retry' });
      expect(plain.disabledEndpoint).toBeUndefined();

      const applied = await answer(first, 410, T0 + 10, GONE_RULES);
      expect(applied).toMatchObject({ applied: true, status: 'held' });
      expect(applied.disabledEndpoint).toMatchObject({ id: ep.id, enabled: false, disabledReason: 'gone' });
      expect(await store.getEndpoint(a, ep.id)).toMatchObject({ enabled: false, disabledReason: 'gone' });
      const log = await store.listDeliveries(a, { endpointId: ep.id, limit: 10 });
      expect(log.items.map((d) => d.status).sort()).toEqual(['held', 'held']);
      expect(await store.getEndpoint(a, kept.id)).toMatchObject({ enabled: true });
    });
  });
}
