import { describe, expect, it } from 'vitest';
import { createSessionStore } from './sessions.js';

const HOUR = 60 * 60 * 1000;

describe('the session store stays bounded', () => {
  it('keeps at most perAccount sessions per account, ending the oldest', () => {
    const sessions = createSessionStore({ perAccount: 3 });
    const ids = Array.from({ length: 5 }, () => sessions.create('acct_a').id);
    sessions.create('acct_b');
    expect(sessions.size()).toBe(4);
    expect(ids.map((id) => sessions.accountOf(id))).toEqual([null, null, 'acct_a', 'acct_a', 'acct_a']);
  });

  it('keeps at most max sessions in all, ending the oldest', () => {
    const sessions = createSessionStore({ max: 100 });
    const ids = Array.from({ length: 250 }, (_, i) => sessions.create(`acct_${i}`).id);
    expect(sessions.size()).toBe(100);
    expect(sessions.accountOf(ids[149]!)).toBeNull();
    expect(sessions.accountOf(ids[150]!)).toBe('acct_150');
  });

  it('drops expired sessions on the next sign-in, before any cap is reached', () => {
    let now = 0;
    const sessions = createSessionStore({ ttlMs: HOUR, now: () => now });
    for (let i = 0; i < 500; i++) sessions.create(`acct_${i}`);
    now = HOUR / 2;
    const live = sessions.create('acct_live').id;
    now = HOUR; // the first 500 have expired; the last one has not
    const last = sessions.create('acct_last').id;
    expect(sessions.size()).toBe(2);
    expect([sessions.accountOf(live), sessions.accountOf(last)]).toEqual(['acct_live', 'acct_last']);
  });

  it('forgets an account once its sessions have ended, and gives it new ones after', () => {
    const sessions = createSessionStore({ perAccount: 1 });
    const first = sessions.create('acct_a').id;
    const second = sessions.create('acct_a').id;
    sessions.delete(second);
    expect(sessions.size()).toBe(0);
    const third = sessions.create('acct_a').id;
    expect([sessions.accountOf(first), sessions.accountOf(third)]).toEqual([null, 'acct_a']);
    expect(sessions.create('acct_a').id).not.toBe(third);
    expect(sessions.accountOf(third)).toBeNull();
  });
});
