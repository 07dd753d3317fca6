import { describe, expect, it } from 'vitest';
import { idsFrom, newId } from './ids.js';

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
    // The ids of the last millisecond before `at` are made first: newId never goes back in time.
    const before = newId('dlv', at - 1);
    const first = newId('dlv', at);
    const last = newId('dlv', at + 999);
    const after = newId('dlv', at + 1000);
    const inWindow = (id: string) => id >= idsFrom('dlv', at) && id < idsFrom('dlv', at + 1000);
    expect([before, first, last, after].map(inWindow)).toEqual([false, true, true, false]);
    expect(idsFrom('dlv', at)).toBe(first.slice(0, 14));
  });
});
