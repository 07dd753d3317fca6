/**
 * The dashboard's timeline (dashboard/src/timeline.ts, design D49) with `now` given: what happened at
 * its real times, and only an attempt that will be made, never at a time already past.
 */
import { describe, expect, it } from 'vitest';
import type { Attempt, Delivery } from '../dashboard/src/api.js';
import { formatSpan, timelineOf } from '../dashboard/src/timeline.js';

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
    updated_at: at(0),
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

const ACTIVE = { enabled: true, paused: false };
const PAUSED = { enabled: true, paused: true };
const DISABLED = { enabled: false, paused: false };
const NOW = T0 + 3_600_000;
const row = (r: {
  number: number;
  kind: string;
  dueAt: number | null;
  madeAt: number | null;
  dueNow: boolean;
}) => [
  r.number,
  r.kind,
  r.dueAt === null ? null : r.dueAt - T0,
  r.madeAt === null ? null : r.madeAt - T0,
  r.dueNow,
];

describe('timelineOf', () => {
  it('lists only the attempt made when the first one was delivered', () => {
    const t = timelineOf(delivery('delivered', null), attempts([10], [null], true), ACTIVE, NOW);
    expect(t.rows).toEqual([
      { number: 1, kind: 'ok', dueAt: T0, madeAt: T0 + 10, dueNow: false, outcome: '200' },
    ]);
    expect(t.laterAttempts).toBe(0);
    expect(t.note).toBeNull();
  });

  it('places attempts at the times the service really used, whatever speed its schedule runs at', () => {
    // A schedule run 1,000× faster: the second attempt due 60 ms after the first, the third at 420 ms.
    const t = timelineOf(delivery('awaiting_retry', 420), attempts([0, 61], [60, 420]), ACTIVE, T0 + 100);
    expect(t.rows.map(row)).toEqual([
      [1, 'failed', 0, 0, false],
      [2, 'failed', 60, 61, false],
      [3, 'next', 420, null, false],
    ]);
    expect(t.laterAttempts).toBe(3);
  });

  it('says "due now" for a planned attempt whose time has passed, never a time in the past', () => {
    const t = timelineOf(delivery('awaiting_retry', 60_000), attempts([0], [60_000]), ACTIVE, T0 + 61_000);
    expect(t.rows.at(-1)).toMatchObject({ kind: 'next', dueNow: true });
  });

  it('ends with the last attempt of a delivery that failed for good, and says why', () => {
    const made = [0, 1, 2, 3, 4, 5];
    const t = timelineOf(delivery('failed', null), attempts(made, [1, 2, 3, 4, 5, null]), ACTIVE, NOW);
    expect(t.rows).toHaveLength(6);
    expect(t.rows.every((r) => r.kind === 'failed')).toBe(true);
    expect(t.laterAttempts).toBe(0);
    expect(t.note).toMatch(/all 6 attempts failed/);
    // A retry by hand that failed too: the note counts it, rather than speak of six.
    const again = timelineOf(
      delivery('failed', null),
      attempts([...made, 6], [1, 2, 3, 4, 5, null, null]),
      ACTIVE,
      NOW,
    );
    expect(again.note).toMatch(/^Failed: its 6 scheduled attempts and a retry by hand failed/);
  });

  it('reads a page of the latest attempts only: the first shown has no due time, the note counts them all', () => {
    // 103 attempts, of which the page holds attempts 4 to 103 (the API's latest 100).
    const all = attempts(
      Array.from({ length: 103 }, (_, i) => i),
      Array.from({ length: 103 }, () => null),
    );
    const t = timelineOf(delivery('failed', null), all.slice(3), ACTIVE, NOW);
    expect(t.rows[0]).toMatchObject({ number: 4, dueAt: null, madeAt: T0 + 3 });
    expect(t.note).toMatch(/^Failed: its 6 scheduled attempts and 97 retries by hand failed/);
  });

  it('lists no attempt for a skipped delivery, and explains skipping', () => {
    const t = timelineOf(delivery('skipped', null), [], DISABLED, NOW);
    expect(t.rows).toEqual([]);
    expect(t.laterAttempts).toBe(0);
    expect(t.note).toMatch(/^Skipped: the endpoint was disabled/);
  });

  it('shows a held delivery of a paused endpoint as waiting for the resume, at no time', () => {
    const t = timelineOf(delivery('held', -5_000), attempts([0], [60_000]), PAUSED, NOW);
    expect(t.rows.at(-1)).toEqual({
      number: 2,
      kind: 'waiting',
      dueAt: null,
      madeAt: null,
      dueNow: false,
      outcome: null,
    });
    expect(t.laterAttempts).toBe(4);
    expect(t.note).toMatch(/endpoint is paused.*when you resume/);
  });

  it('shows a held delivery of a disabled endpoint as waiting for the re-enable', () => {
    const t = timelineOf(delivery('held', null), attempts([0], [60_000]), DISABLED, NOW);
    expect(t.rows.at(-1)?.kind).toBe('waiting');
    expect(t.note).toMatch(/endpoint is disabled.*re-enable/);
  });

  it('shows no time for a queued delivery whose endpoint was paused or disabled since', () => {
    for (const endpoint of [PAUSED, DISABLED]) {
      const t = timelineOf(delivery('awaiting_retry', 60_000), attempts([0], [60_000]), endpoint, NOW);
      expect(t.rows.map(row).at(-1)).toEqual([2, 'waiting', null, null, false]);
      expect(t.rows.some((r) => r.kind === 'next')).toBe(false);
    }
  });

  it('shows the first attempt as next for a delivery not yet attempted', () => {
    const t = timelineOf(delivery('pending', 0), [], null, T0 - 1);
    expect(t.rows.map(row)).toEqual([[1, 'next', 0, null, false]]);
    expect(t.laterAttempts).toBe(5);
  });
});

describe('formatSpan', () => {
  it('writes each span in the unit that fits it, from milliseconds to days', () => {
    expect([12, 1_500, 42_000, 90_000, 1_800_000, 5_400_000, 3 * 86_400_000].map(formatSpan)).toEqual([
      '12 ms',
      '1.5 s',
      '42 s',
      '1.5 min',
      '30 min',
      '1.5 h',
      '3.0 d',
    ]);
  });
});
