/** The dashboard's timeline rows (dashboard/src/timeline.ts): what happened, and what is planned. */
import { describe, expect, it } from 'vitest';
import type { Attempt, Delivery } from '../dashboard/src/api.js';
import { timelineOf } from '../dashboard/src/timeline.js';

const T0 = Date.UTC(2026, 10, 22, 10, 0, 0);
const at = (ms: number) => new Date(T0 + ms).toISOString();

function delivery(status: string, nextMs: number | null): Delivery {
  return {
    id: 'dlv_1',
    event_id: 'evt_1',
    endpoint_id: 'ep_1',
    event: 'click',
    status,
    attempts: 0,
    next_attempt_at: nextMs === null ? null : at(nextMs),
    last_failure_kind: null,
    last_status_code: null,
    test: false,
    created_at: at(0),
  };
}

/** Attempts made at the given times, each failing with 500 and due again at the next time. */
function attempts(madeMs: number[], nextMs: Array<number | null>, lastOk = false): Attempt[] {
  return madeMs.map((made, i) => {
    const ok = lastOk && i === madeMs.length - 1;
    return {
      number: i + 1,
      started_at: at(made),
      duration_ms: 5,
      status_code: ok ? 200 : 500,
      failure_kind: ok ? null : 'http_status',
      error_message: null,
      response_snippet: null,
      next_attempt_at: nextMs[i] === null || nextMs[i] === undefined ? null : at(nextMs[i]!),
      request_headers: {},
    };
  });
}

describe('timelineOf', () => {
  it('lists only the attempt made when the first one was delivered', () => {
    const t = timelineOf(delivery('delivered', null), attempts([10], [null], true));
    expect(t.rows).toEqual([{ number: 1, kind: 'ok', dueAfterMs: 0, madeAfterMs: 10, outcome: '200' }]);
    expect(t.laterAttempts).toBe(0);
  });

  it('shows the times the service really used, whatever speed its schedule runs at', () => {
    // A schedule run 1,000× faster: the second attempt due 60 ms after the first.
    const t = timelineOf(delivery('awaiting_retry', 420), attempts([0, 61], [60, 420]));
    expect(t.rows.map((r) => [r.number, r.kind, r.dueAfterMs, r.madeAfterMs])).toEqual([
      [1, 'failed', 0, 0],
      [2, 'failed', 60, 61],
      [3, 'next', 420, null],
    ]);
    expect(t.laterAttempts).toBe(3);
  });

  it('ends with the last attempt of a delivery that failed for good', () => {
    const made = [0, 1, 2, 3, 4, 5];
    const t = timelineOf(delivery('failed', null), attempts(made, [1, 2, 3, 4, 5, null]));
    expect(t.rows).toHaveLength(6);
    expect(t.rows.every((r) => r.kind === 'failed')).toBe(true);
    expect(t.laterAttempts).toBe(0);
  });

  it('shows a held delivery as waiting for the endpoint, not at a time already past', () => {
    const t = timelineOf(delivery('held', -5_000), attempts([0], [60_000]));
    expect(t.rows.at(-1)).toEqual({
      number: 2,
      kind: 'held',
      dueAfterMs: null,
      madeAfterMs: null,
      outcome: null,
    });
    expect(t.laterAttempts).toBe(4);
  });

  it('shows the first attempt as next for a delivery not yet attempted', () => {
    const t = timelineOf(delivery('pending', 0), []);
    expect(t.rows).toEqual([{ number: 1, kind: 'next', dueAfterMs: 0, madeAfterMs: null, outcome: null }]);
    expect(t.laterAttempts).toBe(5);
  });
});
