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
