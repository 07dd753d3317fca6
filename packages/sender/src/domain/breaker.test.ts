import { describe, expect, it } from 'vitest';
import {
  afterAttempt,
  type BreakerState,
  COOL_DOWN_MS,
  capOf,
  endpointCapOf,
  HELD_SLOT_MS,
  MAX_COOL_DOWN_MS,
} from './breaker.js';

/** Attempts that held their slot (a time-out's 30 s, a connection that hung). */
const HELD = 30_000;

const run = (kinds: Parameters<typeof afterAttempt>[1][], threshold = 3, now = 0, durationMs = HELD) => {
  let state: BreakerState | null = null;
  for (const kind of kinds) state = afterAttempt(state, kind, durationMs, now, threshold);
  return state;
};

describe('circuit breaker', () => {
  it('stays closed below the threshold, and any answer closes it', () => {
    expect(capOf(run(['timeout', 'timeout']), 0, 8)).toBe(8);
    expect(run(['timeout', 'timeout', null])).toBeNull();
    expect(run(['timeout', 'timeout', 'http_status', 'timeout', 'timeout'])).toMatchObject({ trips: 0 });
  });

  it('holds an endpoint to one request from its first unanswered attempt until an answer', () => {
    expect(endpointCapOf(null, 0, 8)).toBe(8);
    expect(endpointCapOf(run(['timeout']), 0, 8)).toBe(1);
    expect(endpointCapOf(run(['timeout', 'timeout']), 0, 8)).toBe(1);
    expect(endpointCapOf(run(['timeout', 'timeout', null]), 0, 8)).toBe(8);
    // A refusal within HELD_SLOT_MS leaves it as it was; open and half-open are capOf's.
    expect(endpointCapOf(run(['connect'], 3, 0, HELD_SLOT_MS - 1), 0, 8)).toBe(8);
    const open = run(['timeout', 'timeout', 'timeout'], 3, 1_000);
    expect(endpointCapOf(open, 1_000, 8)).toBe(0);
    expect(endpointCapOf(open, 1_000 + COOL_DOWN_MS, 8)).toBe(1);
    expect(endpointCapOf(run(['timeout']), 0, 0)).toBe(0);
  });

  it('opens at the threshold of unanswered attempts (time-outs, connections, names) for the cool-down', () => {
    const state = run(['timeout', 'connect', 'dns'], 3, 1_000);
    expect(state).toMatchObject({ trips: 1, openUntil: 1_000 + COOL_DOWN_MS });
    expect(capOf(state, 1_000 + COOL_DOWN_MS - 1, 8)).toBe(0);
    // Half-open after: one probe at a time.
    expect(capOf(state, 1_000 + COOL_DOWN_MS, 8)).toBe(1);
  });

  it('opens once for the attempts already out when it opened, and trips again on a failed probe', () => {
    // Three held their slots until 31 s; two more, out since 2 s, end just after.
    let state = run(['timeout', 'timeout', 'timeout'], 3, 31_000);
    state = afterAttempt(state, 'timeout', 30_000, 32_000, 3);
    state = afterAttempt(state, 'timeout', 30_000, 32_001, 3);
    expect(state).toMatchObject({ trips: 1, openUntil: 31_000 + COOL_DOWN_MS, openedAt: 31_000 });
    // The probe, sent once it is half-open, fails: the second trip.
    const probeEnd = 31_000 + COOL_DOWN_MS + 30_000;
    expect(afterAttempt(state, 'timeout', 30_000, probeEnd, 3)).toMatchObject({
      trips: 2,
      openUntil: probeEnd + 2 * COOL_DOWN_MS,
    });
  });

  it('does not count TLS, blocked or 5xx failures: the receiver is there', () => {
    expect(run(['tls', 'tls', 'tls', 'blocked_address', 'http_status', 'response_too_large'])).toBeNull();
  });

  it('doubles the cool-down with each failed probe, up to its ceiling, and closes on an answered one', () => {
    let state = run(['timeout', 'timeout', 'timeout']);
    const coolDowns: number[] = [];
    let now = 0;
    for (let i = 0; i < 8; i++) {
      now = state!.openUntil;
      expect(capOf(state, now, 8)).toBe(1);
      state = afterAttempt(state, 'timeout', HELD, now, 3);
      coolDowns.push(state!.openUntil - now);
    }
    expect(coolDowns.slice(0, 4)).toEqual([2, 4, 8, 16].map((k) => k * COOL_DOWN_MS));
    expect(Math.max(...coolDowns)).toBe(MAX_COOL_DOWN_MS);
    expect(afterAttempt(state, null, 5, now, 3)).toBeNull();
  });

  it('leaves out unanswered attempts refused at once: they held no slot worth guarding', () => {
    // A closed port, a name that does not exist: refused within milliseconds.
    expect(run(['connect', 'dns', 'connect', 'connect'], 3, 0, HELD_SLOT_MS - 1)).toBeNull();
    // Neither do they close an open breaker: only an answer does.
    const open = run(['timeout', 'timeout', 'timeout']);
    expect(afterAttempt(open, 'connect', 3, open!.openUntil, 3)).toBe(open);
    expect(run(['connect', 'connect', 'connect'], 3, 0, HELD_SLOT_MS)).toMatchObject({ trips: 1 });
  });

  it('never raises a cap above the normal one', () => {
    const state = run(['timeout', 'timeout', 'timeout']);
    expect(capOf(state, state!.openUntil, 0)).toBe(0);
  });
});
