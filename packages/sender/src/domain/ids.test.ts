import { describe, expect, it } from 'vitest';
import { newId } from './ids.js';

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
});
