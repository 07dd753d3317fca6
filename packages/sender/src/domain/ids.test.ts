import { describe, expect, it } from 'vitest';
import { idDigits, idsFrom, newId, newRun, RUN_DIGITS } from './ids.js';

describe('newId', () => {
  it('has the prefix and a 26-character body', () => {
    expect(newId('dlv')).toMatch(/^dlv_[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  it('sorts by creation, within one millisecond too', () => {
    const ids = Array.from({ length: 1000 }, () => newId('evt', 1_700_000_000_000));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(1000);
    const later = newId('evt', 1_700_000_000_001);
    expect(later > ids[999]!).toBe(true);
  });

  it('falls in the window of ids by creation time that holds its time, and in no other', () => {
    const at = 1_700_000_123_456;
    const first = newId('dlv', at);
    const last = newId('dlv', at + 999);
    const after = newId('dlv', at + 1000);
    // Made after the others, with an earlier time (a clock stepped back): it carries that time.
    const before = newId('dlv', at - 1);
    const inWindow = (id: string) => id >= idsFrom('dlv', at) && id < idsFrom('dlv', at + 1000);
    expect([before, first, last, after].map(inWindow)).toEqual([false, true, true, false]);
    expect(idsFrom('dlv', at)).toBe(first.slice(0, 14));
  });

  it('keeps each kind in the order made within a millisecond, whatever other kinds are made between', () => {
    const at = 1_700_000_200_000;
    const events = [newId('evt', at)];
    newId('dlv', at - 5); // another kind's id, of an earlier time, between two events
    events.push(newId('evt', at), newId('evt', at));
    expect([...events].sort()).toEqual(events);
  });

  it('keeps operator notices in the order made even when the time given goes back', () => {
    const at = 1_700_000_300_000;
    const warning = newId('ntc', at + 10);
    const disabling = newId('ntc', at); // made after, for an attempt that finished earlier
    expect(disabling > warning).toBe(true);
  });
});

describe('idDigits', () => {
  it('writes a number in as many digits of the ids as asked, the most significant first', () => {
    expect(idDigits(0, 4)).toBe('0000');
    expect(idDigits(32 ** 2 + 2 * 32 + 31, 4)).toBe('012Z');
    expect(idDigits(32 ** 6 - 1, 6)).toBe('ZZZZZZ');
  });
});

describe('newRun', () => {
  it('gives RUN_DIGITS digits of the ids, each call sorting after the one before', () => {
    const runs = Array.from({ length: 1000 }, () => newRun());
    for (const run of runs) expect(run).toMatch(new RegExp(`^[0-9A-HJKMNP-TV-Z]{${RUN_DIGITS}}$`));
    expect([...runs].sort()).toEqual(runs);
    expect(new Set(runs).size).toBe(1000);
  });
});
