import type { AttemptMade, AttemptReport } from '@linkhooks/sender';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createActivityLog } from './activity-log.js';
import type { ReceivedEvent } from './sample-receiver.js';

let lines: string[];
let clock: number;
beforeEach(() => {
  vi.useFakeTimers();
  lines = [];
  clock = 0;
});
afterEach(() => {
  vi.useRealTimers();
});

const activity = () =>
  createActivityLog({
    log: (line) => lines.push(line),
    maxAttempts: 6,
    disableAfter: 10,
    scheduleMs: 382_000,
    summaryEveryMs: 5_000,
    now: () => clock,
  });

const received = (attempt: number) => ({ attempt }) as ReceivedEvent;

function report(attempt: number, outcome: Partial<AttemptMade['applied']>, failed = true): AttemptMade {
  return {
    claim: { delivery: { id: 'dlv_1', eventName: 'click', endpointId: 'ep_1', accountId: 'acc_1' } },
    attempt: { number: attempt, failureKind: failed ? 'http_status' : null, statusCode: failed ? 500 : 200 },
    applied: { applied: true, ...outcome },
  } as AttemptMade;
}

describe('the activity log', () => {
  it('sums verified deliveries up in one line per period, and says nothing when there were none', async () => {
    const log = activity();
    for (let i = 0; i < 10; i++) log.verified(received(i < 8 ? 1 : 2));
    expect(lines).toEqual([]);
    clock = 5_000;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(lines).toEqual(['receiver: verified 10 deliveries in the last 5 s (2 on a retry)']);
    clock = 10_000;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(lines).toHaveLength(1);
    log.verified(received(1));
    clock = 12_000;
    log.stop();
    expect(lines.at(-1)).toBe('receiver: verified 1 delivery in the last 2 s');
  });

  it('prints each failed attempt at once, the count of a failed delivery, and the disabling, in order', () => {
    const log = activity();
    log.attempt(report(1, { status: 'awaiting_retry', nextAttemptAt: 600 }));
    log.attempt(report(6, { status: 'failed', nextAttemptAt: null, endpointFailures: 3 }));
    log.attempt(
      report(6, {
        status: 'failed',
        endpointFailures: 10,
        disabledEndpoint: { id: 'ep_1', consecutiveFailures: 10 } as never,
      }),
    );
    expect(lines).toEqual([
      'sender: ✗ click dlv_1 attempt 1 of 6 failed (HTTP 500); next in 600 ms',
      'sender: ✗ click dlv_1 failed after 6 attempts (HTTP 500); endpoint ep_1: 3 of 10 failed deliveries in a row',
      'sender: ✗ click dlv_1 failed after 6 attempts (HTTP 500); endpoint ep_1: 10 of 10 failed deliveries in a row',
      'sender: endpoint ep_1 disabled after 10 failed deliveries in a row; its new events are skipped until it is re-enabled (dashboard, or POST /v1/endpoints/ep_1/enable)',
    ]);
  });

  it('says when a failing endpoint delivers again', () => {
    const log = activity();
    log.attempt(report(6, { status: 'failed', nextAttemptAt: null, endpointFailures: 1 }));
    log.attempt(report(1, { status: 'delivered' }, false));
    log.attempt(report(1, { status: 'delivered' }, false));
    expect(lines.slice(1)).toEqual([
      'sender: ✓ endpoint ep_1 delivers again; its failed deliveries in a row are back to 0',
    ]);
  });

  it('says nothing of a request given back unsent: nothing was attempted', () => {
    const log = activity();
    const { claim } = report(1, {});
    const unsent: AttemptReport = { claim, unsent: true, heldMs: 30_000 };
    log.attempt(unsent);
    expect(lines).toEqual([]);
  });

  it('tells what to expect when the receiver is switched to fail', () => {
    activity().modeChanged('fail');
    expect(lines).toEqual([
      'receiver: switched to fail',
      'receiver: each failed attempt is shown as it happens; a delivery fails after 6 attempts (6.4 min at this time scale), and 10 failed deliveries in a row disable the endpoint',
    ]);
  });
});
