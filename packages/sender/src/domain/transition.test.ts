import { describe, expect, it } from 'vitest';
import { decideAfterAttempt } from './delivery-state.js';
import { DEFAULT_DISABLE_POLICY, type DisablePolicy } from './disable-rule.js';
import { DEFAULT_SCHEDULE, maxAttempts } from './schedule.js';
import { decideTransition, mayDisable, type TransitionRules } from './transition.js';

const rules = (policy: Partial<DisablePolicy> = {}): TransitionRules => ({
  schedule: DEFAULT_SCHEDULE,
  policy: { ...DEFAULT_DISABLE_POLICY, ...policy },
});
const AT = 1_000_000;

// Every state an attempt can meet: attempts before it, its endpoint enabled or not, the endpoint's
// count from 0 to the threshold, success or failure, both counting policies.
const cases = [...Array(maxAttempts(DEFAULT_SCHEDULE)).keys()].flatMap((attemptsBefore) =>
  [true, false].flatMap((enabled) =>
    [0, 1, 8, 9, 10].flatMap((consecutiveFailures) =>
      [true, false].flatMap((succeeded) =>
        (['delivery', 'attempt'] as const).map((countPer) => ({
          attemptsBefore,
          enabled,
          consecutiveFailures,
          succeeded,
          countPer,
        })),
      ),
    ),
  ),
);

describe('decideTransition (design I5)', () => {
  it.each(cases)('%o', ({ attemptsBefore, enabled, consecutiveFailures, succeeded, countPer }) => {
    const r = rules({ countPer });
    const t = decideTransition(
      { attemptsBefore, endpoint: { enabled, consecutiveFailures } },
      { succeeded, finishedAt: AT },
      r,
    );
    const base = decideAfterAttempt(attemptsBefore, { ok: succeeded }, AT, r.schedule);
    expect(t.delivery.attempts).toBe(attemptsBefore + 1);
    expect(t.delivery.nextAttemptAt).toBe(base.nextAttemptAt);
    expect(t.delivery.final).toBe(base.final);

    // The count: reset by a delivered delivery, raised per failed delivery (or per failed attempt).
    const counts = !succeeded && (countPer === 'attempt' || base.final === 'failed');
    const count = succeeded ? 0 : counts ? consecutiveFailures + 1 : consecutiveFailures;
    expect(t.endpoint.consecutiveFailures).toBe(count);

    // Disabled once, by the attempt that takes the count to the threshold on an enabled endpoint.
    expect(t.endpoint.disable).toBe(enabled && counts && count >= 10);

    // A retry waits (held) while its endpoint is disabled, whether it was already or is now.
    const disabledAfter = !enabled || t.endpoint.disable;
    const expected = base.status === 'awaiting_retry' && disabledAfter ? 'held' : base.status;
    expect(t.delivery.status).toBe(expected);

    // mayDisable is true exactly where the count can go up, so false means "never disables".
    expect(mayDisable(attemptsBefore, succeeded, r)).toBe(counts);
    if (!counts) expect(t.endpoint.disable).toBe(false);
  });

  it('covers both statuses a retry can take and every final one', () => {
    const statuses = new Set(
      cases.map(
        (c) =>
          decideTransition(
            { attemptsBefore: c.attemptsBefore, endpoint: { enabled: c.enabled, consecutiveFailures: 9 } },
            { succeeded: c.succeeded, finishedAt: AT },
            rules({ countPer: c.countPer }),
          ).delivery.status,
      ),
    );
    expect([...statuses].sort()).toEqual(['awaiting_retry', 'delivered', 'failed', 'held']);
  });
});

describe('decideTransition heeds what the receiver asks (design D40, D41)', () => {
  const HOUR = 60 * 60_000;
  const answers = [
    { statusCode: 429, retryAfter: '120' },
    { statusCode: 503, retryAfter: '86400' },
    { statusCode: 503, retryAfter: new Date(AT + 3 * HOUR).toUTCString() },
    { statusCode: 429, retryAfter: 'soon' },
    { statusCode: 500, retryAfter: '3600' },
    { statusCode: 410, retryAfter: null },
    { statusCode: null, retryAfter: null },
  ];
  const receiverCases = [...Array(maxAttempts(DEFAULT_SCHEDULE)).keys()].flatMap((attemptsBefore) =>
    answers.flatMap((answer) =>
      [true, false].flatMap((disableOnGone) =>
        [true, false].map((enabled) => ({ attemptsBefore, ...answer, disableOnGone, enabled })),
      ),
    ),
  );

  it.each(receiverCases)('%o', ({ attemptsBefore, statusCode, retryAfter, disableOnGone, enabled }) => {
    const r: TransitionRules = { ...rules(), receiver: { honourRetryAfter: true, disableOnGone } };
    const t = decideTransition(
      { attemptsBefore, endpoint: { enabled, consecutiveFailures: 0 } },
      { succeeded: false, finishedAt: AT, statusCode, retryAfter },
      r,
    );
    const base = decideAfterAttempt(attemptsBefore, { ok: false }, AT, r.schedule);
    // Never an attempt more, never a final decision undone.
    expect(t.delivery.final).toBe(base.final);
    expect(t.delivery.attempts).toBe(attemptsBefore + 1);
    if (base.nextAttemptAt === null) expect(t.delivery.nextAttemptAt).toBeNull();
    else {
      const asks = statusCode === 429 || statusCode === 503;
      const asked = retryAfter === '120' ? 120_000 : retryAfter === '86400' ? 24 * HOUR : 3 * HOUR;
      const heeded = asks && retryAfter !== 'soon' ? AT + Math.min(asked, 8 * HOUR) : 0;
      expect(t.delivery.nextAttemptAt).toBe(Math.max(base.nextAttemptAt, heeded));
    }
    const gone = disableOnGone && statusCode === 410;
    expect(t.endpoint.disable).toBe(enabled && gone);
    expect(t.endpoint.disabledReason).toBe(enabled && gone ? 'gone' : null);
    // The count is kept either way: a 410 is one failure like any other (design R11, R14).
    expect(t.endpoint.consecutiveFailures).toBe(base.final === 'failed' ? 1 : 0);
    const held = base.status === 'awaiting_retry' && (!enabled || gone);
    expect(t.delivery.status).toBe(held ? 'held' : base.status);
    expect(mayDisable(attemptsBefore, false, r, statusCode)).toBe(gone || base.final === 'failed');
  });

  it('ignores Retry-After when told to, and on a success', () => {
    const off: TransitionRules = { ...rules(), receiver: { honourRetryAfter: false, disableOnGone: false } };
    const t = decideTransition(
      { attemptsBefore: 0, endpoint: { enabled: true, consecutiveFailures: 0 } },
      { succeeded: false, finishedAt: AT, statusCode: 429, retryAfter: '600' },
      off,
    );
    expect(t.delivery.nextAttemptAt).toBe(AT + 60_000);
    const ok = decideTransition(
      { attemptsBefore: 0, endpoint: { enabled: true, consecutiveFailures: 3 } },
      { succeeded: true, finishedAt: AT, statusCode: 200, retryAfter: '600' },
      rules(),
    );
    expect(ok.delivery).toMatchObject({ status: 'delivered', nextAttemptAt: null });
  });

  it('runs a whole delivery in virtual time against a receiver that always asks for an hour', () => {
    // 429 with Retry-After: 3600 on every attempt: six attempts, each retry at least an hour and
    // at least the schedule's delay after the failure before it, then failed.
    let attemptsBefore = 0;
    let now = AT;
    const starts: number[] = [];
    for (;;) {
      starts.push(now);
      const t = decideTransition(
        { attemptsBefore, endpoint: { enabled: true, consecutiveFailures: 0 } },
        { succeeded: false, finishedAt: now, statusCode: 429, retryAfter: '3600' },
        rules(),
      );
      attemptsBefore = t.delivery.attempts;
      if (t.delivery.nextAttemptAt === null) {
        expect(t.delivery.status).toBe('failed');
        break;
      }
      now = t.delivery.nextAttemptAt;
    }
    const gaps = starts.slice(1).map((s, i) => s - starts[i]!);
    expect(gaps).toEqual([HOUR, HOUR, HOUR, 2 * HOUR, 8 * HOUR]);
    expect(starts).toHaveLength(maxAttempts(DEFAULT_SCHEDULE));
  });
});

describe('decideTransition on a paused endpoint (design D34)', () => {
  it('holds the retry an attempt in flight at the pause schedules, and nothing else', () => {
    for (let attemptsBefore = 0; attemptsBefore < maxAttempts(DEFAULT_SCHEDULE); attemptsBefore++) {
      for (const succeeded of [true, false]) {
        const endpoint = { enabled: true, consecutiveFailures: 0 };
        const paused = decideTransition(
          { attemptsBefore, endpoint: { ...endpoint, paused: true } },
          { succeeded, finishedAt: AT },
          rules(),
        );
        const running = decideTransition(
          { attemptsBefore, endpoint },
          { succeeded, finishedAt: AT },
          rules(),
        );
        const expected = running.delivery.status === 'awaiting_retry' ? 'held' : running.delivery.status;
        expect(paused.delivery.status).toBe(expected);
        expect(paused.delivery.nextAttemptAt).toBe(running.delivery.nextAttemptAt);
        expect(paused.endpoint).toEqual(running.endpoint);
      }
    }
  });
});
