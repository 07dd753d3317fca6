/**
 * An endpoint's statistics over a window (design D45), as one battery every store passes: the
 * window's attempts by bucket and outcome, nearest-rank latency percentiles, last times, the
 * window's deliveries by status; nothing from outside the window, another endpoint or account.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_DISABLE_POLICY } from '../../src/domain/disable-rule.js';
import { newId } from '../../src/domain/ids.js';
import type { TransitionRules } from '../../src/domain/transition.js';
import type { SenderStore } from '../../src/store/port.js';
import type { EventRecord } from '../../src/store/records.js';
import { recordAnswer } from './record-answer.js';

export const T0 = Date.UTC(2026, 10, 22, 12);
const MIN = 60_000;
const HOUR = 60 * MIN;
/** No retries: a failed attempt makes its delivery `failed`, so no claim picks it up again. */
const ONE_TRY: TransitionRules = { schedule: { delaysMs: [] }, policy: DEFAULT_DISABLE_POLICY };

const event = (accountId: string, at: number): EventRecord => ({
  id: newId('evt', at),
  accountId,
  name: 'click',
  body: Buffer.from('{"event":"click","timestamp":"2026-11-22T12:00:00Z","data":{}}'),
  createdAt: at,
});

/** Publishes an event at `at` to the account's endpoints and attempts each of its deliveries once. */
export async function attemptAtIn(
  store: SenderStore,
  accountId: string,
  at: number,
  ok: boolean,
  durationMs: number,
) {
  const { deliveries } = await store.publish(event(accountId, at), () => newId('dlv', at));
  const claimed = await store.claimDue({ now: at, limit: 100, leaseMs: 45_000, perEndpointCap: 100 });
  expect(claimed.map((c) => c.delivery.id).sort()).toEqual(deliveries.map((d) => d.id).sort());
  for (const c of claimed) {
    const applied = await recordAnswer(store, c, ok ? 200 : 500, at + durationMs, {
      rules: ONE_TRY,
      startedAt: at,
      durationMs,
    });
    expect(applied.applied).toBe(true);
  }
}

export function statsBattery(name: string, open: () => Promise<SenderStore>) {
  describe(`${name} endpoint statistics`, () => {
    let store: SenderStore;
    beforeEach(async () => {
      store = await open();
      await store.migrate();
    });
    afterEach(() => store.close());

    const endpoint = (accountId: string) =>
      store.createEndpoint({
        id: newId('ep'),
        accountId,
        url: 'https://receiver.example.com/hook',
        events: ['click'],
        secret: 'whsec_test',
        description: null,
        now: T0 - 48 * HOUR,
      });
    const attemptAt = (accountId: string, at: number, ok: boolean, durationMs: number) =>
      attemptAtIn(store, accountId, at, ok, durationMs);
    const WINDOW = { since: T0, until: T0 + 3 * HOUR, bucketMs: HOUR };

    it('counts the window’s attempts by bucket and outcome, its latency and its deliveries', async () => {
      const accountId = newId('acct');
      const ep = await endpoint(accountId);
      await attemptAt(accountId, T0 - HOUR, true, 9_999); // before the window
      await attemptAt(accountId, T0, true, 100); // the window's first instant
      await attemptAt(accountId, T0 + 20 * MIN, false, 300);
      await attemptAt(accountId, T0 + 70 * MIN, true, 200);
      await attemptAt(accountId, T0 + 130 * MIN, false, 400);
      await attemptAt(accountId, T0 + 131 * MIN, true, 50);
      await attemptAt(accountId, T0 + 3 * HOUR, false, 9_999); // the window's end is excluded
      // Created in the window and never attempted, published after the clock has been later: an
      // id carries the time it was made at, by which deliveries are counted.
      await store.publish(event(accountId, T0 + 150 * MIN), () => newId('dlv', T0 + 150 * MIN));

      const stats = await store.endpointStats(accountId, ep.id, WINDOW);
      expect(stats).toEqual({
        deliveries: { delivered: 3, failed: 2, pending: 1 },
        buckets: [
          // Each bucket's mean and longest duration: (100 + 300) / 2, 200, (400 + 50) / 2.
          { index: 0, succeeded: 1, failed: 1, meanMs: 200, maxMs: 300 },
          { index: 1, succeeded: 1, failed: 0, meanMs: 200, maxMs: 200 },
          { index: 2, succeeded: 1, failed: 1, meanMs: 225, maxMs: 400 },
        ],
        // Durations 50, 100, 200, 300, 400: ranks ⌈2.5⌉ = 3 and ⌈4.75⌉ = 5.
        p50Ms: 200,
        p95Ms: 400,
        lastSuccessAt: T0 + 131 * MIN,
        lastFailureAt: T0 + 130 * MIN,
      });
    });

    it('counts one endpoint only, and answers null for another account’s endpoint', async () => {
      const accountId = newId('acct');
      const ep = await endpoint(accountId);
      await attemptAt(accountId, T0 + MIN, true, 10);
      const other = await endpoint(accountId); // subscribes from now on
      await attemptAt(accountId, T0 + 2 * MIN, false, 20); // one attempt to each endpoint

      const first = await store.endpointStats(accountId, ep.id, WINDOW);
      expect(first?.buckets).toEqual([{ index: 0, succeeded: 1, failed: 1, meanMs: 15, maxMs: 20 }]);
      const second = await store.endpointStats(accountId, other.id, WINDOW);
      expect(second?.buckets).toEqual([{ index: 0, succeeded: 0, failed: 1, meanMs: 20, maxMs: 20 }]);
      expect(second?.deliveries).toEqual({ failed: 1 });

      expect(await store.endpointStats(newId('acct'), ep.id, WINDOW)).toBeNull();
      expect(await store.endpointStats(accountId, 'ep_missing', WINDOW)).toBeNull();
    });

    it('answers zeros and nulls for an endpoint without traffic in the window', async () => {
      const accountId = newId('acct');
      const ep = await endpoint(accountId);
      await attemptAt(accountId, T0 - 2 * HOUR, false, 10);
      expect(await store.endpointStats(accountId, ep.id, WINDOW)).toEqual({
        deliveries: {},
        buckets: [],
        p50Ms: null,
        p95Ms: null,
        lastSuccessAt: null,
        lastFailureAt: null,
      });
    });
  });
}
