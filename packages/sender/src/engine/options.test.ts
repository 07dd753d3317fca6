import { describe, expect, it } from 'vitest';
import { ATTEMPT_TIMEOUT_MS } from '../domain/schedule.js';
import { settingsOf } from './options.js';

describe('the 30-second rule', () => {
  it('gives an attempt 30 s unless set otherwise', () => {
    expect(ATTEMPT_TIMEOUT_MS).toBe(30_000);
    expect(settingsOf({ store: {} as never }).timeoutMs).toBe(30_000);
    expect(settingsOf({ store: {} as never, attemptTimeoutMs: 500 }).timeoutMs).toBe(500);
  });
});
