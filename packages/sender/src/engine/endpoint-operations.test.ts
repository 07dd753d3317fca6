import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { SenderError } from '../errors.js';
import type { FailedRange, SenderStore } from '../store/port.js';
import { endpointOperations, REMAINING_COUNTED_AT_MOST } from './endpoint-operations.js';
import type { QueueSettling } from './queue-settling.js';

/** A store that recovers 3 and answers `count` for what is left; the calls made, in order. */
function recovering(count: (range: FailedRange) => Promise<number>) {
  const calls: string[] = [];
  const store = {
    getEndpoint: async () => ({ id: 'ep_1', enabled: true, paused: false }),
    recoverDeliveries: async () => {
      calls.push('recover');
      return { ok: true, recovered: 3 };
    },
    countFailedDeliveries: async (_id: string, range: FailedRange) => {
      calls.push(`count up to ${range.atMost}`);
      return count(range);
    },
  } as unknown as SenderStore;
  const operations = endpointOperations({
    store,
    clock: new ManualClock(),
    takeRecovery: () => {},
    wake: () => calls.push('wake'),
    settling: {} as QueueSettling,
  });
  return { calls, recover: () => operations.recoverEndpoint('acct_1', 'ep_1', { since: 0 }) };
}

describe('recoverEndpoint', () => {
  it('wakes the worker once the recovery is committed, before what is left is counted', async () => {
    const { calls, recover } = recovering(async () => 7);
    expect(await recover()).toEqual({ recovered: 3, remaining: 7 });
    expect(calls).toEqual(['recover', 'wake', `count up to ${REMAINING_COUNTED_AT_MOST}`]);
  });

  it('has the recovered deliveries sent when the count then fails', async () => {
    const down = new SenderError('store_unavailable', 'the store cannot be reached');
    const { calls, recover } = recovering(() => Promise.reject(down));
    await expect(recover()).rejects.toBe(down);
    expect(calls).toContain('wake');
  });
});
