/**
 * The conformance battery every store passes (design C3): each of the store invariants (design I1
 * to I6) is a test here, run against the SQLite store (on a file and in memory) and PostgreSQL.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ATTEMPTS_KEPT } from '../../src/domain/attempts-kept.js';
import { DEFAULT_DISABLE_POLICY } from '../../src/domain/disable-rule.js';
import { newId } from '../../src/domain/ids.js';
import { DEFAULT_SCHEDULE } from '../../src/domain/schedule.js';
import { decideTransition, type TransitionRules } from '../../src/domain/transition.js';
import { claimWalk, claimWindow, turnEndpointsPerAccount, walkSteps } from '../../src/store/claim-window.js';
import { WALK_FROM_OLDEST_EVERY_MS } from '../../src/store/event-walk.js';
import { ATTEMPTS_SHOWN, EVENT_SCAN } from '../../src/store/log-page-sql.js';
import { accountAtOrigin, turnCursor } from '../../src/store/pick-due.js';
import type { DeliveryFilter, SenderStore } from '../../src/store/port.js';
import { PRUNE_STEP } from '../../src/store/prune-steps.js';
import type { ClaimedDelivery, DeliveryRecord, EventRecord } from '../../src/store/records.js';
import { LARGE_BODY_BYTES } from '../../src/turn-budget.js';
import { claimPastShare, HELD_UP_BACKLOG, sharesOf } from './held-up-claim.js';
import { DEFAULT_RULES as RULES, recordAnswer } from './record-answer.js';

const T0 = Date.UTC(2026, 10, 22, 12);
const LEASE = 45_000;

/**
 * `idsInSql`: the store makes delivery ids in its publish statement (PostgreSQL, one round trip)
 * rather than from the caller's generator; its own tests then show design I2 another way.
 */
type LogFilter = Omit<DeliveryFilter, 'limit' | 'cursor'>;

export function storeBattery(
  name: string,
  open: () => Promise<SenderStore>,
  close?: (store: SenderStore) => Promise<void>,
  { idsInSql = false } = {},
) {
  describe(`${name} store conformance`, () => {
    let store: SenderStore;
    beforeEach(async () => {
      store = await open();
      await store.migrate();
    });
    afterEach(async () => {
      if (close) await close(store);
      else await store.close();
    });

    const account = () => newId('acct');
    const endpoint = (
      accountId: string,
      events: string[] = ['click', 'conversion'],
      admit?: (existing: number) => void,
    ) =>
      store.createEndpoint(
        {
          id: newId('ep'),
          accountId,
          url: 'https://receiver.example.com/hook',
          events: events as never,
          secret: 'whsec_test',
          description: null,
          now: T0,
        },
        admit,
      );
    const event = (accountId: string, name = 'click', at = T0): EventRecord => ({
      id: newId('evt', at),
      accountId,
      name,
      body: Buffer.from(
        `{"event":"${name}","timestamp":"2026-11-22T12:00:00Z","data":{"n":"\u00e9 \ud83d\ude00"}}`,
      ),
      createdAt: at,
    });
    const publish = async (e: EventRecord) =>
      (await store.publish(e, () => newId('dlv', e.createdAt))).deliveries;
    /** Every page of `accountId`'s log under `filter`, by `limit`, as delivery ids, following the cursors. */
    const pagesOf = async (accountId: string, filter: LogFilter, limit: number, most = 100) => {
      const pages: string[][] = [];
      let cursor: string | undefined;
      do {
        const page = await store.listDeliveries(accountId, {
          ...filter,
          limit,
          ...(cursor ? { cursor } : {}),
        });
        expect(page.items.length).toBeLessThanOrEqual(limit);
        pages.push(page.items.map((d) => d.id));
        cursor = page.nextCursor ?? undefined;
        if (cursor && pages.length >= most) throw new Error(`more than ${most} pages`);
      } while (cursor);
      return pages;
    };
    const claim = (now = T0, limit = 100, cap = 100) =>
      store.claimDue({ now, limit, leaseMs: LEASE, perEndpointCap: cap });
    const attempt = (
      c: ClaimedDelivery,
      ok: boolean,
      now: number,
      number = c.delivery.attempts + 1,
      rules: TransitionRules = RULES,
    ) =>
      recordAnswer(store, c, ok ? 200 : 500, now, {
        rules,
        number,
        durationMs: 12,
        responseSnippet: ok ? '{"received":true}' : 'oops',
        requestHeaders: { 'x-service-attempt': String(number) },
      });

    it('gives the deliveries of events published together in one millisecond ids that sort as they were made: by event, then endpoint', async () => {
      const a = account();
      const endpoints = [await endpoint(a), await endpoint(a), await endpoint(a)];
      const events = Array.from({ length: 20 }, () => event(a));
      // At once: the store writes them together, in one transaction or statement or more.
      const published = await Promise.all(events.map(publish));
      const byEndpoint = (x: DeliveryRecord, y: DeliveryRecord) => (x.endpointId < y.endpointId ? -1 : 1);
      const made = published.flatMap((deliveries) => [...deliveries].sort(byEndpoint).map((d) => d.id));
      expect(published.every((deliveries) => deliveries.length === endpoints.length)).toBe(true);
      for (const id of made) expect(id).toMatch(/^dlv_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(new Set(made).size).toBe(made.length);
      expect([...made].sort()).toEqual(made);
    });

    it('counts the commits that wrote publishes: one each for publishes one after another, fewer for publishes together', async () => {
      const a = account();
      await endpoint(a);
      const before = store.publishCommits();
      for (let i = 0; i < 3; i++) await publish(event(a));
      expect(store.publishCommits() - before).toBe(3);
      // At once: the store writes them in as few commits as it can, at least one.
      await Promise.all(Array.from({ length: 40 }, () => publish(event(a))));
      const together = store.publishCommits() - before - 3;
      expect(together).toBeGreaterThanOrEqual(1);
      expect(together).toBeLessThan(40);
    });

    it('persists what decideTransition decides, attempt by attempt, on every path (design I5)', async () => {
      // A model endpoint and delivery advanced by the domain function beside the store's own: every
      // attempt of "fail k times, then succeed" and of "fail to the end", both counting policies,
      // a threshold the first failed delivery (or attempt) reaches and one it does not.
      for (const countPer of ['delivery', 'attempt'] as const) {
        for (const threshold of [1, 10]) {
          const rules: TransitionRules = { schedule: DEFAULT_SCHEDULE, policy: { threshold, countPer } };
          for (const failures of [0, 1, 2, 3, 4, 5, 6]) {
            const a = account();
            const ep = await endpoint(a, ['click']);
            const [d] = await publish(event(a));
            const model = { attempts: 0, enabled: true, count: 0 };
            let now = T0;
            for (let n = 0; n <= failures && n < 6; n++) {
              const [c] = await claim(now);
              expect(c?.delivery.id).toBe(d!.id);
              const succeeded = n === failures;
              now += 1_000;
              const t = decideTransition(
                {
                  attemptsBefore: model.attempts,
                  endpoint: { enabled: model.enabled, consecutiveFailures: model.count },
                },
                { succeeded, finishedAt: now },
                rules,
              );
              const applied = await attempt(c!, succeeded, now, undefined, rules);
              expect(applied).toMatchObject({
                applied: true,
                status: t.delivery.status,
                nextAttemptAt: t.delivery.nextAttemptAt,
              });
              expect(Boolean(applied.disabledEndpoint)).toBe(t.endpoint.disable);
              expect(applied.endpointFailures).toBe(
                t.endpoint.consecutiveFailures > model.count ? t.endpoint.consecutiveFailures : undefined,
              );
              model.attempts = t.delivery.attempts;
              model.count = t.endpoint.consecutiveFailures;
              model.enabled &&= !t.endpoint.disable;
              const stored = (await store.getDelivery(a, d!.id))!;
              expect(stored.delivery).toMatchObject({
                status: t.delivery.status,
                attempts: t.delivery.attempts,
                nextAttemptAt: t.delivery.nextAttemptAt,
              });
              expect(stored.attempts.at(-1)?.nextAttemptAt).toBe(t.delivery.nextAttemptAt);
              expect(await store.getEndpoint(a, ep.id)).toMatchObject({
                consecutiveFailures: model.count,
                enabled: model.enabled,
              });
              if (t.delivery.status !== 'awaiting_retry') break;
              now = t.delivery.nextAttemptAt!;
            }
          }
        }
      }
    });

    it('fans an event out to the subscribed endpoints of its account only (design R8)', async () => {
      const a = account();
      const clicks = await endpoint(a, ['click']);
      await endpoint(a, ['conversion']);
      await endpoint(account(), ['click']);
      const deliveries = await publish(event(a));
      expect(deliveries.map((d) => [d.endpointId, d.status])).toEqual([[clicks.id, 'pending']]);
    });

    it('keeps the event bytes exactly and hands them to every attempt (design I1)', async () => {
      const a = account();
      await endpoint(a);
      const e = event(a);
      await publish(e);
      const [first] = await claim();
      expect(Buffer.from(first!.body).equals(Buffer.from(e.body))).toBe(true);
      await attempt(first!, false, T0);
      const [second] = await claim(T0 + 60_000);
      expect(Buffer.from(second!.body).equals(Buffer.from(e.body))).toBe(true);
      expect(Buffer.from((await store.getEvent(a, e.id))!.body).equals(Buffer.from(e.body))).toBe(true);
    });

    /** Publishes an event of `accountId` with each body, to its `endpoints`; each delivery claimed carries its event's bytes. */
    const expectClaimedBodies = async (accountId: string, bodies: Buffer[], endpoints: number) => {
      const events = bodies.map((body) => ({ ...event(accountId), body }));
      for (const e of events) await publish(e);
      const claimed = await claim();
      expect(claimed).toHaveLength(events.length * endpoints);
      const bodyOf = new Map(events.map((e) => [e.id, e.body.toString('hex')]));
      for (const c of claimed)
        expect(Buffer.from(c.body).toString('hex')).toBe(bodyOf.get(c.delivery.eventId));
    };

    it('hands each delivery of a claim its own event’s bytes, the events’ bodies read once each', async () => {
      const a = account();
      for (let i = 0; i < 3; i++) await endpoint(a);
      // Any bytes: the stores keep bodies as bytes, whatever the wire carries them as.
      const bodies = [Buffer.from('{"n":1}'), Buffer.from([0x00, 0xff, 0x0a, 0x80, 0x3d]), Buffer.alloc(0)];
      await expectClaimedBodies(a, [...bodies, Buffer.from('{"n":333}')], 3);
    });

    it('hands out bodies over 64 KiB byte for byte, whether their bytes are UTF-8 or not', async () => {
      const a = account();
      for (let i = 0; i < 2; i++) await endpoint(a);
      const text = (fill: string) =>
        Buffer.from(`{"data":{"note":"${fill.repeat(LARGE_BODY_BYTES / fill.length + 10)}"}}`);
      const bodies = [
        text('é 😀 '),
        // U+FFFD itself, as any text may hold it.
        text('\uFFFD'),
        // Not UTF-8: a byte that never is, and a four-byte sequence cut after three (which a
        // decoder makes one U+FFFD of three bytes, the same length).
        Buffer.concat([text('x'), Buffer.from([0xff, 0x22])]),
        Buffer.concat([Buffer.from([0xf0, 0x9f, 0x98]), text('y')]),
        Buffer.alloc(LARGE_BODY_BYTES, 0x61),
      ];
      await expectClaimedBodies(a, bodies, 2);
      // A half-open endpoint's probe (design D27) carries its event's bytes as a claim does.
      const probed = await endpoint(account());
      await publish({ ...event(probed.accountId), body: bodies[2]! });
      const [probe] = await store.claimProbes({ now: T0, leaseMs: LEASE, endpointIds: [probed.id] });
      expect(Buffer.from(probe!.body).equals(bodies[2]!)).toBe(true);
    });

    it('keeps exactly the bytes of a body that is a view into a larger buffer, or not a Buffer at all', async () => {
      const a = account();
      await endpoint(a);
      const bytes = Buffer.from(event(a).body);
      const around = Buffer.concat([Buffer.from('<before>'), bytes, Buffer.from('<after>')]);
      const view = around.subarray(8, 8 + bytes.length);
      const plain = new Uint8Array(bytes);
      for (const body of [view, plain]) {
        const e = { ...event(a), body };
        await publish(e);
        expect(Buffer.from((await store.getEvent(a, e.id))!.body).equals(bytes)).toBe(true);
      }
    });

    it.skipIf(idsInSql)('writes the event and its deliveries all or nothing (design I2)', async () => {
      const a = account();
      await endpoint(a);
      await endpoint(a);
      const e = event(a);
      let n = 0;
      await expect(
        store.publish(e, () => {
          if (++n === 2) throw new Error('crash between two deliveries');
          return newId('dlv');
        }),
      ).rejects.toThrow('crash');
      expect(await store.getEvent(a, e.id)).toBeNull();
      expect((await store.listDeliveries(a, { limit: 10 })).items).toEqual([]);
    });

    it('counts an account’s endpoints and stores one more in one step, so creations made together keep to a quota', async () => {
      const accountId = account();
      const other = account();
      await endpoint(other);
      const seen: number[] = [];
      const admit = (existing: number) => {
        seen.push(existing);
        if (existing >= 3) throw new Error('at the quota');
      };
      const created = await Promise.allSettled(
        Array.from({ length: 10 }, () => endpoint(accountId, ['click'], admit)),
      );
      expect(created.filter((c) => c.status === 'fulfilled')).toHaveLength(3);
      expect(
        created
          .filter((c) => c.status === 'rejected')
          .map((c) => (c as PromiseRejectedResult).reason.message),
      ).toEqual(Array(7).fill('at the quota'));
      expect(await store.listEndpoints(accountId)).toHaveLength(3);
      // Each count saw the ones before it, and the other account's endpoint in none.
      expect(seen.slice().sort()).toEqual([0, 1, 2, 3, 3, 3, 3, 3, 3, 3]);
    });

    it('records a skipped delivery for a disabled endpoint', async () => {
      const a = account();
      const ep = await endpoint(a);
      await disable(ep.accountId);
      const [d] = await publish(event(a));
      expect(d).toMatchObject({ endpointId: ep.id, status: 'skipped', nextAttemptAt: null });
      expect(await claim()).toEqual([]);
    });

    it('answers each new delivery as the log holds it: pending, held, skipped, and a test one', async () => {
      const a = account();
      const live = await endpoint(a);
      const paused = await endpoint(a);
      await store.pauseEndpoint(a, paused.id, T0 + 1);
      const b = account();
      await endpoint(b);
      await disable(b);
      const answered = [
        ...(await publish(event(a, 'click', T0 + 2))),
        ...(await publish(event(b, 'conversion', T0 + 3))),
        ...(
          await store.publish(event(a, 'click', T0 + 4), () => newId('dlv', T0 + 4), {
            endpointId: live.id,
            test: true,
          })
        ).deliveries,
      ];
      expect(answered.map((d) => d.status).sort()).toEqual(['held', 'pending', 'pending', 'skipped']);
      expect(answered.filter((d) => d.test)).toHaveLength(1);
      for (const d of answered) expect((await store.getDelivery(d.accountId, d.id))?.delivery).toEqual(d);
    });

    async function disable(accountId: string) {
      for (let i = 0; i < 10; i++) {
        await publish(event(accountId, 'click', T0));
        for (let n = 1; n <= 6; n++) {
          const now = T0 + n * 100_000_000;
          for (const c of await claim(now)) await attempt(c, false, now);
        }
      }
    }

    it('leases a due delivery to one claimer; a lost lease cannot write its result (design I3)', async () => {
      const a = account();
      await endpoint(a);
      await publish(event(a));
      const [first] = await claim();
      expect(first!.leaseExpiresAt).toBe(T0 + LEASE);
      expect(await claim(T0 + 1000)).toEqual([]);
      const [second] = await claim(T0 + LEASE + 1);
      expect(second!.delivery.id).toBe(first!.delivery.id);
      expect(second!.leaseToken).not.toBe(first!.leaseToken);
      expect((await attempt(first!, true, T0 + LEASE + 2)).applied).toBe(false);
      expect(await attempt(second!, false, T0 + LEASE + 3)).toMatchObject({
        applied: true,
        status: 'awaiting_retry',
      });
      const detail = await store.getDelivery(a, first!.delivery.id);
      expect(detail!.attempts).toHaveLength(1);
      expect(detail!.delivery).toMatchObject({
        status: 'awaiting_retry',
        attempts: 1,
        nextAttemptAt: T0 + LEASE + 3 + 60_000,
      });
    });

    it('records only the live lease when both attempts of a delivery are recorded together (design I3)', async () => {
      const a = account();
      await endpoint(a);
      await publish(event(a));
      const [stale] = await claim();
      const [live] = await claim(T0 + LEASE);
      expect(live!.delivery.id).toBe(stale!.delivery.id);
      // Both answers come in at once (a store may record them in one batch): the attempt sent
      // under the lease that ran out fails, the one sent under the lease that took over succeeds.
      const [late, current] = await Promise.all([
        attempt(stale!, false, T0 + LEASE + 1),
        attempt(live!, true, T0 + LEASE + 1),
      ]);
      expect(late).toEqual({ applied: false });
      expect(current).toMatchObject({ applied: true, status: 'delivered' });
      const detail = await store.getDelivery(a, live!.delivery.id);
      expect(detail!.delivery).toMatchObject({ status: 'delivered', attempts: 1, lastStatusCode: 200 });
      expect(detail!.attempts.map((x) => x.statusCode)).toEqual([200]);
    });

    it('writes each attempt its own time, also when attempts are recorded together', async () => {
      const a = account();
      await endpoint(a);
      await endpoint(a);
      await publish(event(a));
      const claimed = await claim();
      expect(claimed).toHaveLength(2);
      // Answered together (a store may record them in one batch), each at a time of its own.
      await Promise.all(claimed.map((c, i) => attempt(c, false, T0 + 10 + i * 40)));
      const updated = await Promise.all(
        claimed.map(async (c) => (await store.getDelivery(a, c.delivery.id))!.delivery.updatedAt),
      );
      expect(updated).toEqual([T0 + 10, T0 + 50]);
    });

    it('records an attempt number at most once (design I4)', async () => {
      const a = account();
      await endpoint(a);
      await publish(event(a));
      const [c1] = await claim();
      await attempt(c1!, false, T0);
      const [c2] = await claim(T0 + 60_000);
      expect((await attempt(c2!, false, T0 + 60_000, 1)).applied).toBe(false);
      expect((await store.getDelivery(a, c1!.delivery.id))!.attempts.map((x) => x.number)).toEqual([1]);
    });

    it('keeps a delivery retried by hand again and again to its latest attempts, shown in order', async () => {
      const a = account();
      const ep = await endpoint(a);
      await publish(event(a));
      let at = T0;
      let id = '';
      for (let n = 1; n <= ATTEMPTS_SHOWN + 3; n++) {
        const [c] = await claim(at);
        id = c!.delivery.id;
        expect((await attempt(c!, true, at)).applied).toBe(true);
        at += 1_000;
        if (n <= ATTEMPTS_SHOWN + 2) expect(await store.retryNow(a, id, at)).toMatchObject({ ok: true });
      }
      const shown = (await store.getDelivery(a, id))!;
      expect(shown.delivery.attempts).toBe(ATTEMPTS_SHOWN + 3);
      expect(shown.attempts.map((x) => x.number)).toEqual(
        Array.from({ length: ATTEMPTS_SHOWN }, (_, i) => i + 4),
      );
      // The three oldest are gone, not only unshown: every attempt the statistics read is kept.
      const stats = await store.endpointStats(a, ep.id, { since: T0, until: at + 1, bucketMs: at + 1 - T0 });
      expect(stats!.buckets.map((b) => b.succeeded + b.failed)).toEqual([ATTEMPTS_KEPT]);
    });

    it('counts queued deliveries by status for the metrics', async () => {
      expect((await store.stats()).queued).toEqual({ pending: 0, awaiting_retry: 0, held: 0 });
      const a = account();
      await endpoint(a, ['click']);
      for (let i = 0; i < 3; i++) await publish(event(a));
      const [first] = await claim(T0, 1);
      await attempt(first!, false, T0);
      const paused = await endpoint(a, ['conversion']);
      await publish(event(a, 'conversion'));
      await store.pauseEndpoint(a, paused.id, T0 + 1);
      // Of the clicks, one failed (awaiting its retry) and two pending; the paused endpoint's held.
      expect((await store.stats()).queued).toEqual({ pending: 2, awaiting_retry: 1, held: 1 });
    });

    it('does not claim deliveries before they are due, and says when the next is', async () => {
      const a = account();
      await endpoint(a);
      await publish(event(a, 'click', T0 + 5000));
      expect(await claim(T0)).toEqual([]);
      expect(await store.nextDueAt()).toBe(T0 + 5000);
      expect(await claim(T0 + 5000)).toHaveLength(1);
    });

    it('disables the endpoint at the 10th failed delivery and holds the rest in the same step (design I5)', async () => {
      const a = account();
      const ep = await endpoint(a);
      for (let i = 0; i < 10; i++) await publish(event(a));
      const extra = await publish(event(a, 'click', T0 + 10 ** 12));
      let disabledAt: number | undefined;
      for (let n = 1; n <= 6; n++) {
        const now = T0 + n * 100_000_000;
        for (const c of await claim(now)) {
          const r = await attempt(c, false, now);
          if (r.disabledEndpoint) {
            expect(disabledAt).toBeUndefined();
            disabledAt = now;
            expect(r.disabledEndpoint).toMatchObject({
              enabled: false,
              consecutiveFailures: 10,
              disabledReason: 'consecutive_failures',
            });
          }
        }
      }
      expect(disabledAt).toBe(T0 + 6 * 100_000_000);
      const current = await store.getEndpoint(a, ep.id);
      expect(current).toMatchObject({ enabled: false, consecutiveFailures: 10, disabledAt });
      expect((await store.getDelivery(a, extra[0]!.id))!.delivery.status).toBe('held');
      expect((await store.stats()).disabledEndpoints).toBe(1);
    });

    it('resets the failure count on a delivered delivery', async () => {
      const a = account();
      const ep = await endpoint(a);
      for (let i = 0; i < 3; i++) await publish(event(a));
      for (let n = 1; n <= 6; n++) {
        const now = T0 + n * 100_000_000;
        for (const c of await claim(now)) await attempt(c, false, now);
      }
      expect((await store.getEndpoint(a, ep.id))!.consecutiveFailures).toBe(3);
      await publish(event(a, 'click', T0 + 10 ** 10));
      for (const c of await claim(T0 + 10 ** 10)) await attempt(c, true, T0 + 10 ** 10);
      expect((await store.getEndpoint(a, ep.id))!.consecutiveFailures).toBe(0);
    });

    it('skips endpoints at their in-flight cap instead of waiting on them (design I6)', async () => {
      const a = account();
      const slow = await endpoint(a, ['click']);
      const fast = await endpoint(a, ['conversion']);
      for (let i = 0; i < 20; i++) await publish(event(a, 'click'));
      await publish(event(a, 'conversion', T0 + 1));
      const first = await claim(T0 + 1, 100, 5);
      expect(first.filter((c) => c.delivery.endpointId === slow.id)).toHaveLength(5);
      expect(first.filter((c) => c.delivery.endpointId === fast.id)).toHaveLength(1);
      await publish(event(a, 'conversion', T0 + 2));
      const second = await claim(T0 + 2, 100, 5);
      expect(second.map((c) => c.delivery.endpointId)).toEqual([fast.id]);
    });

    const endpointAt = (accountId: string, url: string) =>
      store.createEndpoint({
        id: newId('ep'),
        accountId,
        url,
        events: ['click'] as never,
        secret: 'whsec_test',
        description: null,
        now: T0,
      });

    it("passes over an account at the claimer's share and takes the others' deliveries (design D25)", async () => {
      const [a, b] = [account(), account()];
      const a1 = await endpointAt(a, 'https://a.example.com/one');
      const a2 = await endpointAt(a, 'https://a.example.com:8443/two');
      const b1 = await endpointAt(b, 'https://b.example.com/hook');
      for (let i = 0; i < 10; i++) await publish(event(a, 'click', T0 + i));
      await publish(event(b, 'click', T0 + 20));
      const request = { now: T0 + 30, limit: 100, leaseMs: LEASE, perEndpointCap: 100 };
      // A already has 2 open on this claimer: one more at a share of 3.
      const first = await store.claimDue({ ...request, shares: sharesOf(3, 100, [[a, 2]]) });
      // One of A's (which endpoint first is the store's tie order), and B's.
      expect(first.map((c) => c.delivery.accountId).sort()).toEqual([a, b].sort());
      expect([a1.id, a2.id]).toContain(first.find((c) => c.delivery.accountId === a)!.delivery.endpointId);
      expect(first.find((c) => c.delivery.accountId === b)!.delivery.endpointId).toBe(b1.id);
      const second = await store.claimDue({ ...request, now: T0 + 31, shares: sharesOf(3, 100, [[a, 3]]) });
      expect(second).toEqual([]);
      // Without shares the endpoint cap alone applies.
      const rest = await store.claimDue({ ...request, now: T0 + 32 });
      expect(rest).toHaveLength(19);
      expect(rest.every((c) => c.delivery.accountId === a)).toBe(true);
    });

    it("passes over an origin at the claimer's share; an origin is scheme, host and port (design D25)", async () => {
      const a = account();
      const urls = [
        'https://relay.example.com/customer-1',
        'https://relay.example.com/customer-2?x=1',
        'https://relay.example.com:8443/customer-3',
        'https://[2001:db8::1]:9443/v6',
      ];
      const eps = [];
      for (const url of urls) eps.push(await endpointAt(a, url));
      for (let i = 0; i < 3; i++) await publish(event(a, 'click', T0 + i));
      const request = { now: T0 + 10, limit: 100, leaseMs: LEASE, perEndpointCap: 100 };
      const open: [string, number][] = [['https://relay.example.com', 4]];
      const claimed = await store.claimDue({ ...request, shares: sharesOf(100, 5, [], open) });
      const origins = claimed.map((c) => c.origin);
      expect(origins.filter((o) => o === 'https://relay.example.com')).toHaveLength(1);
      expect(origins.filter((o) => o === 'https://relay.example.com:8443')).toHaveLength(3);
      expect(origins.filter((o) => o === 'https://[2001:db8::1]:9443')).toHaveLength(3);
      for (const c of claimed) expect(c.origin).toBe(new URL(c.url).origin);
    });

    it("passes over an account at its share of an origin, and takes the others' there (design D25)", async () => {
      const [a, b] = [account(), account()];
      const relay = 'https://relay.example.com';
      for (let i = 0; i < 3; i++) await endpointAt(a, `${relay}/a-${i}`);
      const own = await endpointAt(a, 'https://a.example.com/own');
      const b1 = await endpointAt(b, `${relay}/b`);
      for (let i = 0; i < 3; i++) await publish(event(a, 'click', T0 + i));
      await publish(event(b, 'click', T0 + 20));
      const request = { now: T0 + 30, limit: 100, leaseMs: LEASE, perEndpointCap: 100 };
      // A has 2 open at the relay, of its 4 there; the relay's share (100) and A's (100) far off.
      const shares = sharesOf(100, 100, [[a, 2]], [[relay, 2]], {
        cap: 4,
        open: [[accountAtOrigin(a, relay), 2]],
      });
      const count = (claimed: ClaimedDelivery[]) => {
        const at = (c: ClaimedDelivery) =>
          c.delivery.accountId === b ? 'b' : c.delivery.endpointId === own.id ? 'a own' : 'a relay';
        const counts: Record<string, number> = {};
        for (const c of claimed) counts[at(c)] = (counts[at(c)] ?? 0) + 1;
        return counts;
      };
      // In due order: A's 9 at the relay first, two taken; its own origin's 3, and B's at the relay.
      const claimed = await store.claimDue({ ...request, shares });
      expect(count(claimed)).toEqual({ 'a relay': 2, 'a own': 3, b: 1 });
      expect(claimed.find((c) => c.delivery.accountId === b)!.delivery.endpointId).toBe(b1.id);
      for (const c of claimed) await store.releaseLease(c.delivery.id, c.leaseToken);
      // With the accounts in turn, the same shares (a turn reads a few of each account's endpoints:
      // A's own may be among them or not).
      const turn = await store.claimTurn({ ...request, now: T0 + 31, shares, after: '' });
      expect(count(turn.claimed)).toMatchObject({ 'a relay': 2, b: 1 });
      for (const c of turn.claimed) await store.releaseLease(c.delivery.id, c.leaseToken);
      // The relay's share nearly taken too (3 more of 5): A's there past its own share take none
      // of it, so B's is taken behind A's one.
      const tight = sharesOf(100, 5, [[a, 2]], [[relay, 2]], {
        cap: 3,
        open: [[accountAtOrigin(a, relay), 2]],
      });
      const behind = await store.claimDue({ ...request, now: T0 + 31, shares: tight });
      expect(count(behind)).toEqual({ 'a relay': 1, 'a own': 3, b: 1 });
      for (const c of behind) await store.releaseLease(c.delivery.id, c.leaseToken);
      // At its share there, none of A's at the relay; B's still.
      const full = sharesOf(100, 100, [], [], { cap: 4, open: [[accountAtOrigin(a, relay), 4]] });
      expect(count(await store.claimDue({ ...request, now: T0 + 32, shares: full }))).toEqual({
        'a own': 3,
        b: 1,
      });
    });

    it("claims another account's delivery at an origin while one account's backlog there, at its share, fills the walk (design D25)", async () => {
      const [a, b] = [account(), account()];
      const relay = 'https://relay.example.com';
      // More of A's endpoints there with something due than the walk, and than the read past it.
      for (let i = 0; i < HELD_UP_BACKLOG; i++) await endpointAt(a, `${relay}/a-${i}`);
      const b1 = await endpointAt(b, `${relay}/b`);
      await publish(event(a, 'click', T0));
      await publish(event(b, 'click', T0 + 1));
      const claimed = await store.claimDue({
        now: T0 + HELD_UP_BACKLOG + 1,
        limit: 8,
        leaseMs: LEASE,
        perEndpointCap: 8,
        shares: sharesOf(8, 8, [], [], { cap: 4, open: [[accountAtOrigin(a, relay), 4]] }),
      });
      expect(claimed.map((c) => c.delivery.endpointId)).toEqual([b1.id]);
    });

    it("keeps the caps given in place of the shares: a breaker's none while open, one while half-open (design D27)", async () => {
      const a = account();
      const open = await endpointAt(a, 'https://down.example.com/one');
      const probing = await endpointAt(a, 'https://slow.example.com/two');
      const healthy = await endpointAt(a, 'https://up.example.com/three');
      const relayed = await endpointAt(a, 'https://relay.example.net/four');
      const halfOpen = await endpointAt(a, 'https://probed.example.net/five');
      // An origin capped at one request (the worker's division of its share, design D25).
      const crowded = await endpointAt(a, 'https://crowded.example.net/eight');
      // Another account's endpoints at the same two servers: an account's breaker there is its own.
      const b = account();
      const othersRelayed = await endpointAt(b, 'https://relay.example.net/six');
      const othersProbed = await endpointAt(b, 'https://probed.example.net/seven');
      for (let i = 0; i < 3; i++) await publish(event(a, 'click', T0 + i));
      for (let i = 0; i < 3; i++) await publish(event(b, 'click', T0 + 5 + i));
      const claimed = await store.claimDue({
        now: T0 + 10,
        limit: 100,
        leaseMs: LEASE,
        perEndpointCap: 100,
        shares: {
          ...sharesOf(100, 100),
          capped: {
            endpoints: new Map([
              [open.id, 0],
              [probing.id, 1],
            ]),
            origins: new Map([['https://crowded.example.net', 1]]),
            accountsAtOrigins: new Map([
              [accountAtOrigin(a, 'https://relay.example.net'), 0],
              [accountAtOrigin(a, 'https://probed.example.net'), 1],
            ]),
          },
        },
      });
      const count = (id: string) => claimed.filter((c) => c.delivery.endpointId === id).length;
      expect(
        [open, probing, healthy, relayed, halfOpen, othersRelayed, othersProbed, crowded].map((e) =>
          count(e.id),
        ),
      ).toEqual([0, 1, 3, 0, 1, 3, 3, 1]);
    });

    it('claims for others while a half-open breaker’s backlog fills the window (design D27)', async () => {
      const a = account();
      const probing = await endpointAt(a, 'https://recovering.example.com/hook');
      for (let i = 0; i < 200; i++) await publish(event(a, 'click', T0 + i));
      const b = account();
      const healthy = await endpointAt(b, 'https://up.example.org/hook');
      await publish(event(b, 'click', T0 + 500));
      // The probe: one of the backlog's deliveries is out.
      const [probe] = await store.claimDue({ now: T0 + 1_000, limit: 1, leaseMs: LEASE, perEndpointCap: 8 });
      expect(probe!.delivery.endpointId).toBe(probing.id);
      const claimed = await store.claimDue({
        now: T0 + 1_001,
        limit: 8,
        leaseMs: LEASE,
        perEndpointCap: 8,
        shares: {
          ...sharesOf(8, 8),
          capped: { endpoints: new Map([[probing.id, 1]]), accountsAtOrigins: new Map() },
        },
      });
      expect(claimed.map((c) => c.delivery.endpointId)).toEqual([healthy.id]);
    });

    it("takes an origin's own cap in place of the origin's share, higher or lower (design D25)", async () => {
      const a = account();
      const wide = await endpointAt(a, 'https://wide.example.net/one');
      const narrow = await endpointAt(a, 'https://narrow.example.net/two');
      for (let i = 0; i < 6; i++) await publish(event(a, 'click', T0 + i));
      // A share of 2 an origin (an account's there 100); the wide one holds 3 already, its own cap
      // 5; the narrow one's 1.
      const claimed = await store.claimDue({
        now: T0 + 10,
        limit: 100,
        leaseMs: LEASE,
        perEndpointCap: 100,
        shares: {
          ...sharesOf(100, 2, [], [['https://wide.example.net', 3]], { cap: 100, open: [] }),
          capped: {
            endpoints: new Map(),
            origins: new Map([
              ['https://wide.example.net', 5],
              ['https://narrow.example.net', 1],
            ]),
            accountsAtOrigins: new Map(),
          },
        },
      });
      const count = (id: string) => claimed.filter((c) => c.delivery.endpointId === id).length;
      expect([count(wide.id), count(narrow.id)]).toEqual([2, 1]);
    });

    it("claims for others at a server while one account's open breaker there holds a backlog filling the window (design D27)", async () => {
      const relay = 'https://relay.example.com';
      const a = account();
      await endpointAt(a, `${relay}/one`);
      await endpointAt(a, `${relay}/two`);
      for (let i = 0; i < 100; i++) await publish(event(a, 'click', T0 + i));
      const b = account();
      const healthy = await endpointAt(b, `${relay}/three`);
      await publish(event(b, 'click', T0 + 500));
      // Nothing of A's out there: the breaker's cap alone says its endpoints there are full.
      const claimed = await store.claimDue({
        now: T0 + 1_000,
        limit: 8,
        leaseMs: LEASE,
        perEndpointCap: 8,
        shares: {
          ...sharesOf(8, 8),
          capped: { endpoints: new Map(), accountsAtOrigins: new Map([[accountAtOrigin(a, relay), 0]]) },
        },
      });
      expect(claimed.map((c) => c.delivery.endpointId)).toEqual([healthy.id]);
    });

    it('probes a half-open endpoint with its earliest due retry, before new deliveries due earlier (design D27)', async () => {
      // An account each: a publish goes to every endpoint of its account.
      const at = (host: string) => endpointAt(account(), `https://${host}.example.com/hook`);
      const [probing, fresh, busy, idle] = [
        await at('probing'),
        await at('fresh'),
        await at('busy'),
        await at('idle'),
      ];
      const only = (ep: { id: string }, now = T0) => ({ now, leaseMs: LEASE, endpointIds: [ep.id] });
      // One failed attempt each of probing and idle: a retry due a minute later.
      const first = new Map<string, string>();
      for (const ep of [probing, idle]) {
        await publish(event(ep.accountId, 'click', T0));
        const [c] = await store.claimProbes(only(ep));
        first.set(ep.id, c!.delivery.id);
        await attempt(c!, false, T0);
      }
      // New deliveries due before those retries; one of busy's out.
      for (const ep of [probing, fresh, busy])
        for (let i = 1; i <= 2; i++) await publish(event(ep.accountId, 'click', T0 + i * 1_000));
      const now = T0 + 2 * 60_000;
      const [out] = await store.claimProbes(only(busy, now - 1_000));
      expect(out!.delivery.attempts).toBe(0);
      const probes = await store.claimProbes({
        now,
        leaseMs: LEASE,
        endpointIds: [probing.id, fresh.id, busy.id, probing.id],
      });
      const byEndpoint = new Map(probes.map((c) => [c.delivery.endpointId, c]));
      expect(probes).toHaveLength(2);
      expect(byEndpoint.get(probing.id)!.delivery).toMatchObject({ id: first.get(probing.id), attempts: 1 });
      expect(byEndpoint.get(fresh.id)!.delivery).toMatchObject({ status: 'pending', createdAt: T0 + 1_000 });
      // Each probe is out now: none more of those endpoints. Idle's retry is due a minute after its failure.
      expect(await store.claimProbes({ now, leaseMs: LEASE, endpointIds: [probing.id, fresh.id] })).toEqual(
        [],
      );
      expect(await store.claimProbes(only(idle, T0 + 59_999))).toEqual([]);
      const [retry] = await store.claimProbes(only(idle, now));
      expect(retry!.delivery.id).toBe(first.get(idle.id));
      // Leased as a claim is: the attempt is recorded under its token.
      expect((await attempt(byEndpoint.get(fresh.id)!, true, now + 1)).status).toBe('delivered');
      // A paused endpoint gives none: its deliveries are held.
      await store.pauseEndpoint(fresh.accountId, fresh.id, now + 2);
      expect(await store.claimProbes(only(fresh, now + 3))).toEqual([]);
    });

    it("takes another tenant's delivery from behind more deliveries it may not take than a claim walks (design D25)", async () => {
      const [a, b] = [account(), account()];
      const held = await endpointAt(a, 'https://stalled.example.com/hook');
      // More of A's due deliveries than a claim of 8 walks, every one due before B's: B's is found
      // by the endpoints' own reads (an unbounded walk found it too, reading all of A's; that the
      // walk stops at its bound is claim-plan.test.ts's to hold).
      const backlog = HELD_UP_BACKLOG;
      for (let i = 0; i < backlog; i++) await publish(event(a, 'click', T0 + i));
      const healthy = await endpointAt(b, 'https://up.example.org/hook');
      await publish(event(b, 'click', T0 + backlog));
      const request = { now: T0 + backlog + 1, limit: 8, leaseMs: LEASE, perEndpointCap: 8 };
      // A's account at the claimer's share: none of A's may be taken, B's is found all the same.
      const past = await store.claimDue({ ...request, shares: sharesOf(8, 8, [[a, 8]]) });
      expect(past.map((c) => c.delivery.endpointId)).toEqual([healthy.id]);
      // A's endpoint at its cap: its first 8 out, B's next one is found past the rest.
      const first = await store.claimDue({ ...request, now: T0 + backlog + 2 });
      expect(first.map((c) => c.delivery.endpointId)).toEqual(Array(8).fill(held.id));
      await publish(event(b, 'click', T0 + backlog + 3));
      const next = await store.claimDue({ ...request, now: T0 + backlog + 4 });
      expect(next.map((c) => c.delivery.endpointId)).toEqual([healthy.id]);
    });

    it('finds past a backlog it may not take what a retry, a resume, a retry now, a re-enabling and a recovery made due (design D25)', async () => {
      const a = account();
      await endpointAt(a, 'https://stalled.example.com/hook');
      const backlog = HELD_UP_BACKLOG;
      for (let i = 0; i < backlog; i++) await publish(event(a, 'click', T0 + i));
      const at = T0 + backlog;
      // A's account at the claimer's share throughout: every claim reads past the walk.
      const claimPast = (now: number) => claimPastShare(store, now, a);
      const heldUp = async (now: number) => (await claimPast(now)).map((c) => c.delivery.endpointId);
      /** A new account's endpoint at `url`, a click to it at `when`, claimed right after. */
      const claimedAt = async (url: string, when: number) => {
        const accountId = account();
        const endpoint = await endpointAt(accountId, url);
        await publish(event(accountId, 'click', when));
        const [claimed] = await claimPast(when + 1);
        expect(claimed!.delivery.endpointId).toBe(endpoint.id);
        return { accountId, endpoint, claimed: claimed! };
      };
      // A first attempt fails: nothing of that endpoint's is due until its retry is.
      const { endpoint: retried, claimed: first } = await claimedAt('https://retried.example.org/hook', at);
      const failed = await attempt(first, false, at + 2);
      expect(failed).toMatchObject({ applied: true, status: 'awaiting_retry' });
      expect(await heldUp(at + 3)).toEqual([]);
      // A click to a paused endpoint waits for the resume, then goes.
      const c = account();
      const paused = await endpointAt(c, 'https://paused.example.org/hook');
      await store.pauseEndpoint(c, paused.id, at + 4);
      await publish(event(c, 'click', at + 5));
      expect(await heldUp(at + 6)).toEqual([]);
      await store.resumeEndpoint(c, paused.id, at + 7);
      expect(await heldUp(at + 8)).toEqual([paused.id]);
      // A retry made due now by hand goes now.
      const manual = await claimedAt('https://manual.example.org/hook', at + 9);
      expect(await attempt(manual.claimed, false, at + 11)).toMatchObject({
        applied: true,
        status: 'awaiting_retry',
      });
      expect(await heldUp(at + 12)).toEqual([]);
      const retryNow = await store.retryNow(manual.accountId, manual.claimed.delivery.id, at + 13);
      expect(retryNow).toMatchObject({ ok: true });
      expect(await heldUp(at + 14)).toEqual([manual.endpoint.id]);
      // An endpoint disabled by a failure, then re-enabled: its held delivery goes now.
      const flaky = await claimedAt('https://flaky.example.org/hook', at + 15);
      const disabling: TransitionRules = {
        schedule: DEFAULT_SCHEDULE,
        policy: { threshold: 1, countPer: 'attempt' },
      };
      expect(await attempt(flaky.claimed, false, at + 17, 1, disabling)).toMatchObject({ applied: true });
      expect(await heldUp(at + 18)).toEqual([]);
      await store.reenableEndpoint(flaky.accountId, flaky.endpoint.id, {
        replaySkipped: false,
        now: at + 19,
      });
      expect(await heldUp(at + 20)).toEqual([flaky.endpoint.id]);
      // A delivery that failed for good, recovered by hand: it goes now.
      const lost = await claimedAt('https://lost.example.org/hook', at + 21);
      const lastTry: TransitionRules = { schedule: { delaysMs: [] }, policy: DEFAULT_DISABLE_POLICY };
      expect(await attempt(lost.claimed, false, at + 23, 1, lastTry)).toMatchObject({ status: 'failed' });
      expect(await heldUp(at + 24)).toEqual([]);
      const recovered = await store.recoverDeliveries(lost.accountId, lost.endpoint.id, {
        since: at + 21,
        until: at + 22,
        now: at + 25,
        limit: 10,
      });
      expect(recovered).toMatchObject({ ok: true, recovered: 1 });
      expect(await heldUp(at + 26)).toEqual([lost.endpoint.id]);
      // At the first one's retry, the four leases taken since have run out: theirs are due again,
      // and before it.
      const retryAt = failed.applied ? failed.nextAttemptAt! : 0;
      expect(retryAt).toBeGreaterThan(at + 26 + LEASE);
      expect(await heldUp(retryAt)).toEqual([
        paused.id,
        manual.endpoint.id,
        flaky.endpoint.id,
        lost.endpoint.id,
        retried.id,
      ]);
    });

    it("takes the accounts in turn when asked: each one's first, then each one's second, within the caps and shares (design D77)", async () => {
      // A first in the turn's order from the start.
      const [a, b] = [account(), account()].sort() as [string, string];
      // A's backlog, all due before B's two; both endpoints at one origin (a relay's), so the
      // origin's share counts them together.
      await endpointAt(a, 'https://relay.example.com/a');
      const backlog = 40;
      const ofA: string[] = [];
      for (let i = 0; i < backlog; i++)
        ofA.push(...(await publish(event(a, 'click', T0 + i))).map((d) => d.id));
      await endpointAt(b, 'https://relay.example.com/b');
      const ofB: string[] = [];
      for (let i = 0; i < 2; i++)
        ofB.push(...(await publish(event(b, 'click', T0 + backlog + i))).map((d) => d.id));
      const request = { now: T0 + backlog + 2, limit: 4, leaseMs: LEASE, perEndpointCap: 100 };
      const ids = (claimed: ClaimedDelivery[]) => claimed.map((c) => c.delivery.id).sort();
      // In due order, A's backlog first.
      const inOrder = await store.claimDue(request);
      expect(ids(inOrder)).toEqual(ofA.slice(0, 4));
      // In turn, three of them: A's next, B's first, A's next; B's second would be the fourth. The
      // origin's share is three: ranked in due order, B's first would be past it.
      const inTurn = await store.claimTurn({
        ...request,
        limit: 3,
        after: '',
        shares: sharesOf(100, 3),
      });
      expect(ids(inTurn.claimed)).toEqual([...ofA.slice(4, 6), ofB[0]!].sort());
      // The shares still hold: B's account at the claimer's share, only A's are taken.
      const atShare = await store.claimTurn({
        ...request,
        limit: 3,
        now: T0 + backlog + 4,
        after: '',
        shares: sharesOf(8, 8, [[b, 8]]),
      });
      expect(ids(atShare.claimed)).toEqual(ofA.slice(6, 9));
    });

    /** A turn of `limit` after `after`, with a share of `perOrigin` an origin. */
    const turnRequest = (now: number, limit: number, perOrigin: number, after: string) => ({
      now,
      limit,
      leaseMs: LEASE,
      perEndpointCap: 100,
      after,
      shares: sharesOf(100, perOrigin),
    });
    /**
     * `n` turns of `limit` at `now`, an origin's share `perOrigin`, each after the cursor the store
     * answered for the one before (`cursor: 'store'`), or, to weigh what that cursor does, after
     * the last account the one before took (`'lastTaken'`: turnCursor without the origins' shares
     * or where the read after the cursor stopped), or from the first id on each time (`'start'`).
     * Answers each turn's claims and the cursors the store answered; the leases are given back at
     * the end, so that each run starts from the same deliveries.
     */
    const runTurns = async (
      n: number,
      {
        now,
        limit,
        perOrigin = 100,
        cursor = 'store',
      }: { now: number; limit: number; perOrigin?: number; cursor?: 'store' | 'lastTaken' | 'start' },
    ) => {
      let after = '';
      const turns: ClaimedDelivery[][] = [];
      const next: string[] = [];
      for (let turn = 0; turn < n; turn++) {
        const taken = await store.claimTurn(turnRequest(now, limit, perOrigin, after));
        turns.push(taken.claimed);
        next.push(taken.next);
        if (cursor === 'store') after = taken.next;
        else if (cursor === 'lastTaken')
          after = turnCursor(after, taken.claimed, (c) => c.delivery.accountId);
      }
      await Promise.all(turns.flat().map((c) => store.releaseLease(c.delivery.id, c.leaseToken)));
      const accounts = (claimed: ClaimedDelivery[]) => claimed.map((c) => c.delivery.accountId);
      return {
        turns,
        next,
        accounts: turns.flatMap(accounts),
        ids: turns.flat().map((c) => c.delivery.id),
      };
    };

    it('takes every account in turn over turns after a cursor, however many more than a turn holds have a backlog due first (design D77)', async () => {
      // Ten tenants' backlogs, each all due before the next one's, then B's one click: more
      // tenants than a turn of three takes.
      const noisy = Array.from({ length: 10 }, () => account());
      for (const [i, a] of noisy.entries()) {
        await endpointAt(a, `https://n${i}.example.com/hook`);
        for (let k = 0; k < 6; k++) await publish(event(a, 'click', T0 + i * 6 + k));
      }
      const b = account();
      await endpointAt(b, 'https://up.example.org/hook');
      const [ofB] = await publish(event(b, 'click', T0 + 60));
      const turns = (cursor: 'store' | 'start') =>
        runTurns(Math.ceil(11 / 3), { now: T0 + 61, limit: 3, cursor });
      // With the cursor left at the start, the same three each time: the first three tenants'.
      const fromStart = await turns('start');
      const first = [...noisy, b].sort().slice(0, 3);
      expect(new Set(fromStart.accounts)).toEqual(new Set(first));
      // With the cursor moved on, each turn three others, every one of the eleven within four turns.
      const inTurn = await turns('store');
      for (const claimed of inTurn.turns.slice(0, 3))
        expect(new Set(claimed.map((c) => c.delivery.accountId)).size).toBe(3);
      expect(new Set(inTurn.accounts)).toEqual(new Set([...noisy, b]));
      expect(inTurn.ids).toContain(ofB!.id);
    });

    it("takes a turn's accounts in the cursor's order, so that an origin's share cutting it short leaves out those the next turn starts with (design D77)", async () => {
      // Seven tenants behind one relay's origin, their backlogs due in the reverse of their ids'
      // order; the origin's share lets two of a turn's four through.
      const tenants = Array.from({ length: 7 }, () => account()).sort();
      for (const [k, a] of [...tenants].reverse().entries()) {
        await endpointAt(a, `https://relay.example.com/${k}`);
        for (let i = 0; i < 4; i++) await publish(event(a, 'click', T0 + k * 4 + i));
      }
      const { turns } = await runTurns(4, { now: T0 + 28, limit: 4, perOrigin: 2 });
      const took = turns.map((claimed) => claimed.map((c) => c.delivery.accountId).sort());
      // Two at a time in id order: taken in due order, each turn's two would be its last two.
      expect(took).toEqual([
        tenants.slice(0, 2),
        tenants.slice(2, 4),
        tenants.slice(4, 6),
        [tenants[0]!, tenants[6]!],
      ]);
    });

    it('moves the cursor no further than an origin a turn left at its share, so the accounts it left out come next (design D77)', async () => {
      // Six tenants in id order, the first two behind one relay's origin, the others at origins of
      // their own; every origin's share is one, turns of three.
      const [r1, r2, ...others] = Array.from({ length: 6 }, () => account()).sort();
      for (const [k, a] of [r1!, r2!, ...others].entries()) {
        await endpointAt(a, k < 2 ? `https://relay.example.com/${k}` : `https://own${k}.example.com/hook`);
        for (let i = 0; i < 6; i++) await publish(event(a, 'click', T0 + k * 6 + i));
      }
      const turns = async (n: number, cursor: 'store' | 'lastTaken') =>
        (await runTurns(n, { now: T0 + 36, limit: 3, perOrigin: 1, cursor })).accounts;
      // The cursor at the last account taken: R2, left out behind R1 while the third was taken,
      // is passed over every time round.
      expect(await turns(6, 'lastTaken')).not.toContain(r2);
      // The store's stops at R1, the last taken at the full origin: R2 comes in the next turn.
      expect(await turns(2, 'store')).toContain(r2);
    });

    it("takes another tenant's first in turn past a tenant's many endpoints, reading a few of them (design D77)", async () => {
      const [a, b] = [account(), account()].sort() as [string, string];
      // One of A's clicks to each of its endpoints, more than a turn reads of one account, all due
      // before B's.
      const many = 2 * turnEndpointsPerAccount(4, 1);
      for (let i = 0; i < many; i++) await endpointAt(a, `https://a${i}.example.com/hook`);
      const ofA = (await publish(event(a, 'click', T0))).map((d) => d.id).sort();
      await endpointAt(b, 'https://up.example.org/hook');
      const [ofB] = await publish(event(b, 'click', T0 + 1));
      const request = { now: T0 + 2, limit: 4, leaseMs: LEASE, perEndpointCap: 1 };
      const inTurn = (await store.claimTurn({ ...request, after: '' })).claimed.map((c) => c.delivery.id);
      // B's, and three of A's from the endpoints it read; in due order, B's would be the last.
      expect(inTurn).toHaveLength(4);
      expect(inTurn).toContain(ofB!.id);
      const rest = (await store.claimDue({ ...request, limit: 100 })).map((c) => c.delivery.id);
      expect([...inTurn, ...rest].sort()).toEqual([...ofA, ofB!.id].sort());
    });

    it("takes in turn the accounts after its cursor past more tenants' endpoints due first than a claim walks (design D77)", async () => {
      // Six tenants with a hundred endpoints each (more than a claim of four walks), a click to
      // each, all due before B's; B's id after theirs.
      const tenants = Array.from({ length: 6 }, () => account()).sort();
      for (const [k, a] of tenants.entries()) {
        for (let i = 0; i < 100; i++) await endpointAt(a, `https://t${k}-${i}.example.com/hook`);
        await publish(event(a, 'click', T0 + k));
      }
      expect(tenants.length * 100).toBeGreaterThan(claimWalk(claimWindow(4)));
      const b = account();
      await endpointAt(b, 'https://up.example.org/hook');
      const [ofB] = await publish(event(b, 'click', T0 + 6));
      // Turns of four from the first id on: the first four tenants, then the next four after the
      // last of them, B among them.
      const first = await store.claimTurn(turnRequest(T0 + 7, 4, 100, ''));
      expect(new Set(first.claimed.map((c) => c.delivery.accountId))).toEqual(new Set(tenants.slice(0, 4)));
      // It found six accounts past the cursor and chose four: the next turn starts after the last
      // of them, with the other two, not where its read stopped.
      expect(first.next).toBe(tenants[3]);
      const second = await store.claimTurn(turnRequest(T0 + 7, 4, 100, first.next));
      expect(new Set(second.claimed.map((c) => c.delivery.accountId))).toEqual(
        new Set([...tenants.slice(4), b, tenants[0]]),
      );
      expect(second.claimed.map((c) => c.delivery.id)).toContain(ofB!.id);
    });

    it("moves the cursor past where a turn's read after it stopped, so that over turns it reaches an account behind more tenants' endpoints than two walks (design D77)", async () => {
      // Twelve tenants with a hundred endpoints each, a click to each, all due before B's; B's id
      // after theirs. Turns of eight read five tenants' endpoints past the cursor (a walk of 512).
      const tenants = Array.from({ length: 12 }, () => account()).sort();
      for (const [k, a] of tenants.entries()) {
        for (let i = 0; i < 100; i++) await endpointAt(a, `https://t${k}-${i}.example.com/hook`);
        await publish(event(a, 'click', T0 + k));
      }
      const b = account();
      await endpointAt(b, 'https://up.example.org/hook');
      const [ofB] = await publish(event(b, 'click', T0 + 12));
      const turns = (cursor: 'store' | 'lastTaken') => runTurns(3, { now: T0 + 13, limit: 8, cursor });
      // The cursor at the last account taken goes back to the first tenants once a turn takes
      // every account it read: B is never reached.
      const stays = await turns('lastTaken');
      expect(stays.ids).not.toContain(ofB!.id);
      // The store's, at where the read stopped, goes on from there: B in the third turn.
      const goesOn = await turns('store');
      expect(goesOn.ids).toContain(ofB!.id);
      // The first turn's read stopped in the sixth tenant's endpoints (the 512th and 513th after
      // the cursor), having read every endpoint of the fifth.
      expect(goesOn.next[0]).toBe(tenants[4]);
    });

    it("goes on from the first id on when a turn's read after the cursor reached the last account, its rows filled or not (design D77)", async () => {
      // A, A2 and C with a click each and an endpoint each (far fewer than a claim walks): a turn of
      // two after A2 takes C, then A from the first id on; the read stopped nowhere, so the next
      // turn starts after A, with A2, not after C again.
      const [a, a2, c] = Array.from({ length: 3 }, () => account()).sort() as [string, string, string];
      for (const [k, tenant] of [a, a2, c].entries()) {
        await endpointAt(tenant, `https://t${k}.example.com/hook`);
        await publish(event(tenant, 'click', T0 + k));
      }
      const { claimed, next } = await store.claimTurn(turnRequest(T0 + 3, 2, 100, a2));
      expect(claimed.map((x) => x.delivery.accountId).sort()).toEqual([a, c]);
      expect(next).toBe(a);
    });

    it("says no further than the last account a turn's read after the cursor gave, when it gave as many as it reads (design D77)", async () => {
      // A and B with a click each; C and D after them with three hundred endpoints each and
      // nothing due, more than a claim of two walks.
      const [a, b, c, d] = Array.from({ length: 4 }, () => account()).sort() as [
        string,
        string,
        string,
        string,
      ];
      for (const [k, tenant] of [a, b].entries()) {
        await endpointAt(tenant, `https://due${k}.example.com/hook`);
        await publish(event(tenant, 'click', T0 + k));
      }
      for (const [k, tenant] of [c, d].entries())
        for (let i = 0; i < 300; i++) await endpointAt(tenant, `https://idle${k}-${i}.example.com/hook`);
      const { claimed, next } = await store.claimTurn(turnRequest(T0 + 2, 2, 100, ''));
      expect(new Set(claimed.map((x) => x.delivery.accountId))).toEqual(new Set([a, b]));
      // The read stopped in D's endpoints, having read all of C's; its two rows, A's and B's,
      // were all it gives a turn of two: the cursor goes no further than B, so that C's are read
      // again.
      expect(next).toBe(b);
    });

    it("finds another tenant's delivery past more of a tenant's endpoints than a claim walks, that tenant at the claimer's share (design D25)", async () => {
      const a = account();
      const many = claimWalk(claimWindow(8)) + 1;
      for (let i = 0; i < many; i++) await endpointAt(a, `https://a${i}.example.com/hook`);
      // One click of A's to each of its endpoints, every one due before B's.
      await publish(event(a, 'click', T0));
      const b = account();
      const healthy = await endpointAt(b, 'https://up.example.org/hook');
      await publish(event(b, 'click', T0 + 1));
      const claimed = await claimPastShare(store, T0 + 2, a);
      expect(claimed.map((c) => c.delivery.endpointId)).toEqual([healthy.id]);
    });

    it("finds another tenant's delivery past more of a tenant's endpoints in flight than a claim walks, their requests other workers' (design D25)", async () => {
      const a = account();
      // More than PostgreSQL's walk steps past, however many are in flight (SQLite's steps past any
      // number within its due-time index; the next case reaches its read of the endpoints in flight).
      const many = walkSteps(claimWindow(8), Number.POSITIVE_INFINITY) + 1;
      for (let i = 0; i < many; i++) await endpointAt(a, `https://a${i}.example.com/hook`);
      await publish(event(a, 'click', T0));
      // Other workers hold every one of A's clicks, each endpoint below its cap: this claimer's
      // shares do not count them, so A is at no limit of its, and the endpoints, read first in due
      // order, have nothing to give. (A hanging tenant across many processes.)
      const elsewhere = await store.claimDue({ now: T0 + 1, limit: many, leaseMs: LEASE, perEndpointCap: 8 });
      expect(elsewhere).toHaveLength(many);
      // C's endpoint has a request of its own out and a second click due: in flight too, and not
      // to be hidden by A's.
      const c = account();
      const busy = await endpointAt(c, 'https://busy.example.org/hook');
      await publish(event(c, 'click', T0 + 2));
      const [out] = await store.claimDue({ now: T0 + 3, limit: 100, leaseMs: LEASE, perEndpointCap: 8 });
      expect(out!.delivery.endpointId).toBe(busy.id);
      await publish(event(c, 'click', T0 + 4));
      const b = account();
      const healthy = await endpointAt(b, 'https://up.example.org/hook');
      await publish(event(b, 'click', T0 + 5));
      const claimed = await claimPastShare(store, T0 + 6, account());
      expect(claimed.map((d) => d.delivery.endpointId)).toEqual([busy.id, healthy.id]);
    });

    it("finds another tenant's delivery on an endpoint in flight past a tenant's backlog at the claimer's share (design D25)", async () => {
      const a = account();
      const many = claimWalk(claimWindow(8)) + 1;
      for (let i = 0; i < many; i++) await endpointAt(a, `https://a${i}.example.com/hook`);
      // C's endpoint has a request out and a second click due behind A's clicks, which fill the walk
      // and which this claimer may not take (A at its share): C's is found among the endpoints in
      // flight, read apart from the others.
      const c = account();
      const busy = await endpointAt(c, 'https://busy.example.org/hook');
      await publish(event(c, 'click', T0));
      const [out] = await store.claimDue({ now: T0 + 1, limit: 100, leaseMs: LEASE, perEndpointCap: 8 });
      expect(out!.delivery.endpointId).toBe(busy.id);
      await publish(event(a, 'click', T0 + 2));
      await publish(event(c, 'click', T0 + 3));
      const claimed = await claimPastShare(store, T0 + 4, a);
      expect(claimed.map((d) => d.delivery.endpointId)).toEqual([busy.id]);
    });

    it('does not count deliveries being recorded against the cap, nor claims them again (design I6)', async () => {
      const a = account();
      const ep = await endpoint(a);
      for (let i = 0; i < 6; i++) await publish(event(a));
      const first = await claim(T0, 100, 2);
      expect(first).toHaveLength(2);
      // Both requests are still out: the endpoint is at its cap.
      expect(await claim(T0 + 1, 100, 2)).toEqual([]);
      // One response is in and being recorded: one more may go out, and not the one being recorded.
      const finishing = [{ deliveryId: first[0]!.delivery.id, leaseToken: first[0]!.leaseToken }];
      const second = await store.claimDue({
        now: T0 + 2,
        limit: 100,
        leaseMs: LEASE,
        perEndpointCap: 2,
        finishing,
      });
      expect(second).toHaveLength(1);
      expect(second[0]!.delivery.endpointId).toBe(ep.id);
      expect(first.map((c) => c.delivery.id)).not.toContain(second[0]!.delivery.id);
      // A name without a lease frees nothing, nor does a delivery named with a token not its own:
      // only a lease the caller holds does.
      const unknown = [
        { deliveryId: 'dlv_not_leased', leaseToken: second[0]!.leaseToken },
        { deliveryId: second[0]!.delivery.id, leaseToken: 'not-the-token' },
      ];
      expect(
        await store.claimDue({
          now: T0 + 3,
          limit: 100,
          leaseMs: LEASE,
          perEndpointCap: 3,
          finishing: unknown,
        }),
      ).toHaveLength(0);
      expect(
        await store.claimDue({
          now: T0 + 4,
          limit: 100,
          leaseMs: LEASE,
          perEndpointCap: 3,
          finishing: [{ deliveryId: second[0]!.delivery.id, leaseToken: second[0]!.leaseToken }],
        }),
      ).toHaveLength(1);
    });

    it('counts a lease taken over after expiry against the cap, whoever named the old one', async () => {
      const a = account();
      await endpoint(a);
      // Due one after the other: the first is the earliest due when its lease runs out.
      for (let i = 0; i < 2; i++) await publish(event(a, 'click', T0 + i));
      const [stale] = await claim(T0, 1, 1);
      // The lease runs out; another claimer takes the delivery over.
      const [taken] = await claim(T0 + LEASE, 1, 1);
      expect(taken!.delivery.id).toBe(stale!.delivery.id);
      expect(taken!.leaseToken).not.toBe(stale!.leaseToken);
      // The first claimer still believes its attempt is being recorded: its old lease frees no slot.
      const request = { now: T0 + LEASE + 1, limit: 10, leaseMs: LEASE, perEndpointCap: 1 };
      const old = [{ deliveryId: stale!.delivery.id, leaseToken: stale!.leaseToken }];
      expect(await store.claimDue({ ...request, finishing: old })).toEqual([]);
    });

    it('renews the leases the caller holds, and only those (the heartbeat, design I3)', async () => {
      const a = account();
      await endpoint(a);
      for (let i = 0; i < 3; i++) await publish(event(a));
      const [kept, recorded, lost] = await claim(T0, 3, 3);
      const ref = (c: ClaimedDelivery) => ({ deliveryId: c.delivery.id, leaseToken: c.leaseToken });
      await attempt(recorded!, true, T0 + 1);
      // `lost` runs out unrenewed and another claimer takes it over.
      const renewed = await store.renewLeases([ref(kept!), ref(recorded!)], T0 + LEASE + 1_000);
      expect(renewed).toEqual([ref(kept!)]);
      const [taken] = await claim(T0 + LEASE, 10, 3);
      expect(taken!.delivery.id).toBe(lost!.delivery.id);
      expect(await store.renewLeases([ref(lost!), ref(kept!)], T0 + 2 * LEASE)).toEqual([ref(kept!)]);
      // The renewed lease holds past its first expiry: nobody can claim it; the taken-over one
      // is still the new holder's, whose own renewal works.
      expect(await claim(T0 + LEASE + 500, 10, 3)).toEqual([]);
      expect(await store.renewLeases([ref(taken!)], T0 + 2 * LEASE)).toEqual([ref(taken!)]);
      // Once the renewed expiry passes unrenewed, the delivery is claimable again.
      const [again] = await claim(T0 + 2 * LEASE, 10, 3);
      expect(again!.delivery.id).toBe(kept!.delivery.id);
      expect(await store.renewLeases([], T0)).toEqual([]);
    });

    it('gives a released lease back at once', async () => {
      const a = account();
      await endpoint(a);
      await publish(event(a));
      const [c] = await claim();
      await store.releaseLease(c!.delivery.id, 'not-the-token');
      expect(await claim(T0 + 1)).toEqual([]);
      await store.releaseLease(c!.delivery.id, c!.leaseToken);
      expect(await claim(T0 + 1)).toHaveLength(1);
    });

    it('re-enables: counter reset, held resumed, skipped replayed only when asked', async () => {
      const a = account();
      const ep = await endpoint(a);
      await disable(a);
      const held = await publish(event(a, 'click', T0 - 1));
      expect(held[0]!.status).toBe('skipped');
      const other = account();
      expect(await store.reenableEndpoint(other, ep.id, { replaySkipped: true, now: T0 })).toBeNull();
      const once = await store.reenableEndpoint(a, ep.id, { replaySkipped: false, now: T0 });
      expect(once).toMatchObject({
        endpoint: { enabled: true, consecutiveFailures: 0, disabledReason: null },
        replayed: 0,
      });
      expect((await store.getDelivery(a, held[0]!.id))!.delivery.status).toBe('skipped');
      const again = await store.reenableEndpoint(a, ep.id, { replaySkipped: true, now: T0 + 5 });
      expect(again!.replayed).toBe(1);
      const replayed = (await store.getDelivery(a, held[0]!.id))!.delivery;
      expect(replayed).toMatchObject({ status: 'pending', nextAttemptAt: T0 + 5 });
    });

    it('retries one delivery now, except for another account or a disabled endpoint', async () => {
      const a = account();
      await endpoint(a);
      const [d] = await publish(event(a));
      for (let n = 0; n < 6; n++) {
        const now = T0 + n * 100_000_000;
        for (const c of await claim(now)) await attempt(c, false, now);
      }
      expect((await store.getDelivery(a, d!.id))!.delivery.status).toBe('failed');
      expect(await store.retryNow(account(), d!.id, T0)).toEqual({ ok: false, reason: 'not_found' });
      const later = T0 + 10 ** 9;
      const result = await store.retryNow(a, d!.id, later);
      expect(result).toMatchObject({
        ok: true,
        delivery: { status: 'awaiting_retry', nextAttemptAt: later, attempts: 6 },
      });
      const [c] = await claim(later);
      expect(c!.delivery.attempts).toBe(6);
      expect(await store.retryNow(a, d!.id, later)).toEqual({ ok: false, reason: 'in_flight' });
    });

    it('pages the delivery log newest first with filters, scoped to the account', async () => {
      const a = account();
      const e1 = await endpoint(a, ['click']);
      await endpoint(a, ['click', 'conversion']);
      const b = account();
      await endpoint(b, ['click']);
      for (let i = 0; i < 5; i++) await publish(event(a, 'click', T0 + i));
      await publish(event(a, 'conversion', T0 + 10));
      await publish(event(b, 'click'));
      const all: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.listDeliveries(a, { limit: 4, ...(cursor ? { cursor } : {}) });
        all.push(...page.items.map((d) => d.id));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      expect(all).toHaveLength(11);
      expect([...all].sort().reverse()).toEqual(all);
      expect((await store.listDeliveries(a, { limit: 50, endpointId: e1.id })).items).toHaveLength(5);
      expect((await store.listDeliveries(a, { limit: 50, event: 'conversion' })).items).toHaveLength(1);
      expect((await store.listDeliveries(a, { limit: 50, status: 'delivered' })).items).toHaveLength(0);
      expect((await store.listDeliveries(b, { limit: 50 })).items).toHaveLength(1);
    });

    it('pages a log of several statuses newest first, whole and by status, by account and endpoint', async () => {
      const a = account();
      const e1 = await endpoint(a, ['click']);
      await endpoint(a, ['click']);
      for (let i = 0; i < 9; i++) await publish(event(a, 'click', T0 + i));
      // A third delivered, a third awaiting a retry, a third still pending, spread over the log.
      const claimed = (await claim(T0 + 100)).sort((x, y) => (x.delivery.id < y.delivery.id ? -1 : 1));
      for (const [i, c] of claimed.entries()) if (i % 3 < 2) await attempt(c, i % 3 === 0, T0 + 100);
      const b = account();
      await endpoint(b, ['click']);
      await publish(event(b, 'click', T0 + 5));
      const whole = (await store.listDeliveries(a, { limit: 100 })).items;
      expect(whole).toHaveLength(18);
      expect(new Set(whole.map((d) => d.status))).toEqual(
        new Set(['delivered', 'awaiting_retry', 'pending']),
      );
      const newestFirst = (ds: { id: string }[]) =>
        ds
          .map((d) => d.id)
          .sort()
          .reverse();
      expect(whole.map((d) => d.id)).toEqual(newestFirst(whole));
      const paged = async (filter: LogFilter) => (await pagesOf(a, filter, 2)).flat();
      const expected = (keep: (d: (typeof whole)[number]) => boolean) => newestFirst(whole.filter(keep));
      expect(await paged({})).toEqual(expected(() => true));
      expect(await paged({ endpointId: e1.id })).toEqual(expected((d) => d.endpointId === e1.id));
      for (const status of ['delivered', 'awaiting_retry', 'pending', 'failed'] as const) {
        expect(await paged({ status })).toEqual(expected((d) => d.status === status));
        expect(await paged({ status, endpointId: e1.id })).toEqual(
          expected((d) => d.status === status && d.endpointId === e1.id),
        );
      }
      expect(await paged({ status: 'delivered', event: 'click' })).toEqual(
        expected((d) => d.status === 'delivered'),
      );
      expect(await paged({ event: 'conversion' })).toEqual([]);
    });

    it('pages by an event behind more than a window of others, however many pages that takes', async () => {
      const a = account();
      await endpoint(a);
      const [conversion] = await publish(event(a, 'conversion', T0));
      for (let i = 1; i <= EVENT_SCAN + 100; i++) await publish(event(a, 'click', T0 + i));
      const pages = await pagesOf(a, { event: 'conversion' }, 5);
      expect(pages.flat()).toEqual([conversion!.id]);
      // A store that reads a window of each range at a time may take a page more, never more.
      expect(pages.length).toBeLessThanOrEqual(2);
      // A dense event still fills its pages.
      const clicks = await store.listDeliveries(a, { event: 'click', limit: 5 });
      expect(clicks.items).toHaveLength(5);
      expect(clicks.nextCursor).toBe(clicks.items[4]!.id);
    });

    it('keeps every attempt with its fields, in order', async () => {
      const a = account();
      await endpoint(a);
      const [d] = await publish(event(a));
      const [c1] = await claim();
      await attempt(c1!, false, T0);
      const [c2] = await claim(T0 + 60_000);
      await attempt(c2!, true, T0 + 60_000);
      const detail = await store.getDelivery(a, d!.id);
      expect(detail!.delivery).toMatchObject({
        status: 'delivered',
        attempts: 2,
        lastStatusCode: 200,
        nextAttemptAt: null,
      });
      expect(detail!.attempts).toEqual([
        expect.objectContaining({
          number: 1,
          statusCode: 500,
          failureKind: 'http_status',
          nextAttemptAt: T0 + 60_000,
          responseSnippet: 'oops',
        }),
        expect.objectContaining({
          number: 2,
          statusCode: 200,
          failureKind: null,
          nextAttemptAt: null,
          durationMs: 12,
        }),
      ]);
      expect(detail!.attempts[1]!.requestHeaders).toEqual({ 'x-service-attempt': '2' });
      expect(await store.getDelivery(account(), d!.id)).toBeNull();
    });

    it('keeps endpoints apart by account (tenant isolation)', async () => {
      const a = account();
      const b = account();
      const ep = await endpoint(a);
      expect(await store.getEndpoint(b, ep.id)).toBeNull();
      expect(await store.updateEndpoint(b, ep.id, { url: 'https://evil.example/' }, T0)).toBeNull();
      expect(await store.deleteEndpoint(b, ep.id)).toBe(false);
      expect(await store.listEndpoints(b)).toEqual([]);
      expect((await store.getEndpoint(a, ep.id))!.url).toBe('https://receiver.example.com/hook');
      const updated = await store.updateEndpoint(
        a,
        ep.id,
        { events: ['link.created'], description: 'x' },
        T0 + 1,
      );
      expect(updated).toMatchObject({
        events: ['link.created'],
        description: 'x',
        updatedAt: T0 + 1,
        secret: 'whsec_test',
      });
      expect(await store.deleteEndpoint(a, ep.id)).toBe(true);
      expect(await store.getEndpoint(a, ep.id)).toBeNull();
    });

    it('deletes an endpoint in steps: marked, it is gone for every read of endpoints and from fan-out, none of its deliveries is claimed, each step takes at most its limit, then the endpoint goes (design D78)', async () => {
      const a = account();
      const doomed = await endpoint(a, ['click']);
      const kept = await endpoint(a, ['click']);
      const made: DeliveryRecord[] = [];
      for (let i = 0; i < 5; i++) made.push(...(await publish(event(a))));
      const idsOf = (ep: { id: string }) => made.filter((d) => d.endpointId === ep.id).map((d) => d.id);
      const [doomedIds, keptIds] = [idsOf(doomed), idsOf(kept)];
      expect([doomedIds.length, keptIds.length]).toEqual([5, 5]);
      // Every delivery failed once: each has an attempt, and a retry due a minute later.
      for (const c of await claim()) await attempt(c, false, T0 + 1);

      expect(await store.deleteEndpointStep(a, doomed.id, 10)).toBe(0); // not marked: takes nothing
      expect(await store.markEndpointDeleted(account(), doomed.id, T0 + 2)).toBe(false);
      expect(await store.markEndpointDeleted(a, doomed.id, T0 + 2)).toBe(true);
      // Marked again, as a repeated DELETE does: it resumes.
      expect(await store.markEndpointDeleted(a, doomed.id, T0 + 3)).toBe(true);
      expect(await store.getEndpoint(a, doomed.id)).toBeNull();
      expect((await store.listEndpoints(a)).map((e) => e.id)).toEqual([kept.id]);
      expect(await store.updateEndpoint(a, doomed.id, { description: 'x' }, T0 + 3)).toBeNull();
      expect(await store.pauseEndpoint(a, doomed.id, T0 + 3)).toBeNull();
      expect(await store.resumeEndpoint(a, doomed.id, T0 + 3)).toBeNull();
      expect(await store.reenableEndpoint(a, doomed.id, { replaySkipped: true, now: T0 + 3 })).toBeNull();
      expect(
        await store.recoverDeliveries(a, doomed.id, { since: 0, until: T0 + 3, limit: 10, now: T0 + 3 }),
      ).toEqual({ ok: false, reason: 'not_found' });
      expect(
        await store.endpointStats(a, doomed.id, { since: T0, until: T0 + 3, bucketMs: 1_000 }),
      ).toBeNull();
      expect((await store.listDeliveries(a, { limit: 10, endpointId: doomed.id })).items).toEqual([]);
      expect((await store.stats()).disabledEndpoints).toBe(0);
      expect(await store.retryNow(a, doomedIds[0]!, T0 + 3)).toEqual({ ok: false, reason: 'not_found' });
      expect((await store.endpointsBeingDeleted(100)).filter((e) => e.accountId === a)).toEqual([
        { accountId: a, id: doomed.id },
      ]);
      expect((await publish(event(a, 'click', T0 + 4))).map((d) => d.endpointId)).toEqual([kept.id]);
      const retried = await claim(T0 + 10 ** 8);
      expect(retried.map((c) => c.delivery.endpointId)).toEqual(Array(6).fill(kept.id));

      expect(await store.deleteEndpointStep(account(), doomed.id, 10)).toBe(0); // another account's: nothing
      const steps = [await store.deleteEndpointStep(a, doomed.id, 2)];
      while (steps.at(-1) !== 0) steps.push(await store.deleteEndpointStep(a, doomed.id, 2));
      expect(steps).toEqual([2, 2, 1, 0]);
      for (const id of doomedIds) expect(await store.getDelivery(a, id)).toBeNull();
      for (const id of keptIds) expect((await store.getDelivery(a, id))!.attempts).toHaveLength(1);
      expect(await store.deleteEndpoint(a, doomed.id)).toBe(true);
      expect((await store.endpointsBeingDeleted(100)).filter((e) => e.accountId === a)).toEqual([]);
      expect(await store.markEndpointDeleted(a, doomed.id, T0 + 5)).toBe(false);
    });

    it('claims past the due deliveries of an endpoint being deleted, however many come first (design D78)', async () => {
      const a = account();
      const doomed = await endpoint(a, ['conversion']);
      await endpoint(a, ['click']); // the other click's
      // More of the doomed endpoint's due first than a claim of 8 walks (claimWindow), then one other.
      for (let i = 0; i < claimWindow(8) + 8; i++) await publish(event(a, 'conversion', T0 - 1_000));
      const [other] = await publish(event(a, 'click', T0));
      expect(await store.markEndpointDeleted(a, doomed.id, T0)).toBe(true);
      const claimed = await claim(T0, 8, 8);
      expect(claimed.map((c) => c.delivery.id)).toEqual([other!.id]);
    });

    it('prunes final deliveries past retention and keeps the rest', async () => {
      const a = account();
      await endpoint(a);
      const [done] = await publish(event(a));
      for (const c of await claim()) await attempt(c, true, T0);
      const [waiting] = await publish(event(a, 'click', T0 + 10 ** 9));
      expect(await store.pruneBefore(T0 + 1)).toBe(1);
      expect(await store.getDelivery(a, done!.id)).toBeNull();
      expect(await store.getDelivery(a, waiting!.id)).not.toBeNull();
    });

    it('prunes in steps: every final delivery and every emptied event past the cutoff, nothing newer', async () => {
      const a = account();
      const ep = await endpoint(a, ['click']);
      // Disable the endpoint by hand: its deliveries are `skipped`, final at once.
      const [first] = await publish(event(a));
      for (const c of await claim())
        await attempt(c, false, T0, 1, { ...RULES, policy: { threshold: 1, countPer: 'attempt' } });
      expect((await store.getEndpoint(a, ep.id))!.enabled).toBe(false);
      const n = Math.round(PRUNE_STEP * 2.5);
      const old = await Promise.all(Array.from({ length: n }, (_, i) => publish(event(a, 'click', T0 + i))));
      expect(old.flat().every((d) => d.status === 'skipped')).toBe(true);
      const lonelyEvents = Array.from({ length: n }, (_, i) => event(a, 'conversion', T0 + i));
      const lonely = await Promise.all(lonelyEvents.map((e) => store.publish(e, () => newId('dlv'))));
      expect(lonely.flatMap((p) => p.deliveries)).toHaveLength(0); // events no endpoint subscribes to
      const fresh = event(a, 'conversion', T0 + 10 ** 9);
      await store.publish(fresh, () => newId('dlv'));
      const [kept] = await publish(event(a, 'click', T0 + 10 ** 9));

      expect(await store.pruneBefore(T0 + n)).toBe(n);
      expect(await store.getDelivery(a, old[n - 1]![0]!.id)).toBeNull();
      expect(await store.getDelivery(a, first!.id)).not.toBeNull(); // held: not final
      expect(await store.getDelivery(a, kept!.id)).not.toBeNull();
      expect(await store.getEvent(a, fresh.id)).not.toBeNull();
      for (const e of [lonelyEvents[0]!, lonelyEvents[n - 1]!])
        expect(await store.getEvent(a, e.id)).toBeNull();
      expect((await store.listDeliveries(a, { limit: 10 })).items.map((d) => d.id).sort()).toEqual(
        [first!.id, kept!.id].sort(),
      );
    });

    it('walks old events on from where the last prune ended, and from the oldest once a day', async () => {
      const a = account();
      const held = await endpoint(a, ['click']);
      await store.pauseEndpoint(a, held.id, T0);
      // A held delivery is never pruned: its event stays, and the next walks go on past it.
      const kept = event(a, 'click', T0);
      const [waiting] = (await store.publish(kept, () => newId('dlv'))).deliveries;
      expect(waiting!.status).toBe('held');
      await store.pruneBefore(T0 + 1);
      expect(await store.getEvent(a, kept.id)).not.toBeNull();
      // Its delivery goes with its endpoint: the event is now left without any, behind the walk.
      expect(await store.markEndpointDeleted(a, held.id, T0 + 2)).toBe(true);
      while ((await store.deleteEndpointStep(a, held.id, PRUNE_STEP)) > 0);
      expect(await store.getDelivery(a, waiting!.id)).toBeNull();
      // An hour on, the walk reads only what passed the cutoff since: a new event without deliveries.
      const lonely = event(a, 'conversion', T0 + 10);
      await store.publish(lonely, () => newId('dlv'));
      await store.pruneBefore(T0 + 3_600_000);
      expect(await store.getEvent(a, lonely.id)).toBeNull();
      expect(await store.getEvent(a, kept.id)).not.toBeNull();
      // A day after its walk from the oldest, the walk starts there again.
      await store.pruneBefore(T0 + 1 + WALK_FROM_OLDEST_EVERY_MS);
      expect(await store.getEvent(a, kept.id)).toBeNull();
    });

    it('pages secrets not sealed with a prefix by id, and replaces them by compare-and-set (design D29)', async () => {
      const a = account();
      const mine = new Set<string>();
      for (let i = 0; i < 5; i++) mine.add((await endpoint(a)).id);
      const sealed = [...mine].sort()[0]!;
      expect(await store.replaceSecrets([{ id: sealed, from: 'whsec_test', to: 'lhenc:v2:k_1_:x' }])).toEqual(
        [sealed],
      );
      // Other tests' endpoints may share the store: only this account's are looked at.
      const pages: string[][] = [];
      let after: string | null = null;
      for (;;) {
        const page = await store.secretsNotSealedWith('lhenc:v2:k_1_:', after, 2);
        pages.push(page.filter((r) => mine.has(r.id)).map((r) => r.id));
        if (page.length < 2) break;
        after = page[page.length - 1]!.id;
      }
      expect(pages.flat()).toEqual([...mine].sort().filter((id) => id !== sealed));
      // `_` is no wildcard: a secret that only matches the prefix as a LIKE pattern is listed.
      const lookalike = [...mine].sort()[1]!;
      await store.replaceSecrets([{ id: lookalike, from: 'whsec_test', to: 'lhenc:v2:kx1x:y' }]);
      const all = await store.secretsNotSealedWith('lhenc:v2:k_1_:', null, 10_000);
      expect(all.find((r) => r.id === lookalike)?.secret).toBe('lhenc:v2:kx1x:y');
      const [stale, fresh] = [...mine].sort().slice(2);
      const written = await store.replaceSecrets([
        { id: stale!, from: 'whsec_not_what_is_stored', to: 'lhenc:v2:k_1_:lost' },
        { id: fresh!, from: 'whsec_test', to: 'lhenc:v2:k_1_:kept' },
      ]);
      expect(written).toEqual([fresh]);
      expect((await store.getEndpoint(a, stale!))!.secret).toBe('whsec_test');
      expect((await store.getEndpoint(a, fresh!))!.secret).toBe('lhenc:v2:k_1_:kept');
      expect(await store.replaceSecrets([])).toEqual([]);
    });

    it('keeps accounts and finds one by its API key hash only', async () => {
      const id = newId('acct');
      const hash = 'a'.repeat(64);
      const created = await store.createAccount({
        id,
        name: 'Acme',
        plan: 'business',
        apiKeyHash: hash,
        now: T0,
      });
      expect(created).toEqual({ id, name: 'Acme', plan: 'business', apiKeyHash: hash, createdAt: T0 });
      expect(await store.getAccount(id)).toEqual(created);
      expect(await store.findAccountByApiKeyHash(hash)).toEqual(created);
      expect(await store.findAccountByApiKeyHash('b'.repeat(64))).toBeNull();
      expect(await store.getAccount('acct_missing')).toBeNull();
      await expect(
        store.createAccount({ id: newId('acct'), name: 'Copy', plan: 'pro', apiKeyHash: hash, now: T0 }),
      ).rejects.toThrow();
      expect(await store.findAccountByApiKeyHash(hash)).toEqual(created);
    });

    it('publishes a test event to the one endpoint named, within its account, if it subscribes', async () => {
      const a = account();
      const target = await endpoint(a, ['click']);
      const sibling = await endpoint(a, ['click']);
      const other = await endpoint(account(), ['click']);
      const only = await store.publish(event(a), () => newId('dlv'), { endpointId: target.id });
      expect(only.deliveries.map((d) => d.endpointId)).toEqual([target.id]);
      expect(
        await store.publish(event(a, 'conversion'), () => newId('dlv'), { endpointId: target.id }),
      ).toMatchObject({ deliveries: [], duplicate: false });
      expect(await store.publish(event(a), () => newId('dlv'), { endpointId: other.id })).toMatchObject({
        deliveries: [],
        duplicate: false,
      });
      const all = await store.publish(event(a), () => newId('dlv'));
      expect(all.deliveries.map((d) => d.endpointId).sort()).toEqual([target.id, sibling.id].sort());
    });
  });
}
