/**
 * The conformance battery every idempotency store passes (design C3): memory and Redis run
 * the same cases. `lapse(key)` makes a key's TTL run out — the memory store by moving its clock,
 * Redis by expiring the key — so no test waits for real time to pass.
 */
import type { IdempotencyStore } from '@linkhooks/receiver';
import { isWebhookError, runOnce } from '@linkhooks/receiver';
import { describe, expect, it } from 'vitest';

export interface StoreUnderTest {
  store: IdempotencyStore;
  lapse(key: string): Promise<void>;
}

let n = 0;
const freshKey = () => `click:clk_${process.pid}_${Date.now()}_${n++}`;

export function idempotencyBattery(name: string, make: () => StoreUnderTest): void {
  describe(`${name} idempotency store`, () => {
    it('claims a new key once; a second claim sees it in flight', async () => {
      const { store } = make();
      const key = freshKey();
      expect(await store.claim(key, 'a', 60_000)).toBe('claimed');
      expect(await store.claim(key, 'b', 60_000)).toBe('in_flight');
    });

    it('reports a completed key as completed', async () => {
      const { store } = make();
      const key = freshKey();
      await store.claim(key, 'a', 60_000);
      await store.complete(key, 'a', 86_400_000);
      expect(await store.claim(key, 'b', 60_000)).toBe('completed');
    });

    it('frees a key released by its own claim, and ignores a release by another token', async () => {
      const { store } = make();
      const key = freshKey();
      await store.claim(key, 'a', 60_000);
      await store.release(key, 'b');
      expect(await store.claim(key, 'c', 60_000)).toBe('in_flight');
      await store.release(key, 'a');
      expect(await store.claim(key, 'd', 60_000)).toBe('claimed');
    });

    it('lets a lapsed claim be taken again, and the stale run cannot complete over the new claim', async () => {
      const { store, lapse } = make();
      const key = freshKey();
      await store.claim(key, 'stale', 60_000);
      await lapse(key);
      expect(await store.claim(key, 'fresh', 60_000)).toBe('claimed');
      await store.complete(key, 'stale', 86_400_000);
      await store.release(key, 'stale');
      expect(await store.claim(key, 'other', 60_000)).toBe('in_flight');
      await store.complete(key, 'fresh', 86_400_000);
      expect(await store.claim(key, 'other', 60_000)).toBe('completed');
    });

    it('records a completion whose claim lapsed meanwhile', async () => {
      const { store, lapse } = make();
      const key = freshKey();
      await store.claim(key, 'a', 60_000);
      await lapse(key);
      await store.complete(key, 'a', 86_400_000);
      expect(await store.claim(key, 'b', 60_000)).toBe('completed');
    });

    it('forgets a completed key once its TTL runs out', async () => {
      const { store, lapse } = make();
      const key = freshKey();
      await store.claim(key, 'a', 60_000);
      await store.complete(key, 'a', 86_400_000);
      await lapse(key);
      expect(await store.claim(key, 'b', 60_000)).toBe('claimed');
    });

    it('hands a key to exactly one of 50 concurrent claims', async () => {
      const { store } = make();
      const key = freshKey();
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => store.claim(key, `t${i}`, 60_000)),
      );
      expect(results.filter((r) => r === 'claimed')).toHaveLength(1);
      expect(results.filter((r) => r === 'in_flight')).toHaveLength(49);
    });

    it('runOnce: runs, then reports duplicates; releases and rethrows on failure', async () => {
      const { store } = make();
      const key = freshKey();
      let runs = 0;
      expect(await runOnce({ store }, key, () => ++runs)).toEqual({ status: 'ran', value: 1 });
      expect(await runOnce({ store }, key, () => ++runs)).toEqual({ status: 'duplicate' });
      const failing = freshKey();
      await expect(
        runOnce({ store }, failing, () => {
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(await runOnce({ store }, failing, () => 'retried')).toEqual({ status: 'ran', value: 'retried' });
    });

    it('runOnce: a run while another is in flight is a duplicate_in_flight error', async () => {
      const { store } = make();
      const key = freshKey();
      let release!: () => void;
      const first = runOnce({ store }, key, () => new Promise<void>((r) => (release = r)));
      await expect.poll(() => release).toBeTypeOf('function');
      const second = await runOnce({ store }, key, () => 'never').catch((e: unknown) => e);
      expect(isWebhookError(second) && second.code).toBe('duplicate_in_flight');
      release();
      await expect(first).resolves.toEqual({ status: 'ran', value: undefined });
    });
  });
}
