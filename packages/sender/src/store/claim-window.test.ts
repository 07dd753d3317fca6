import { describe, expect, it } from 'vitest';
import { inTurnOrder, turnEndpoints, turnEndpointsPerAccount, turnReadTo } from './claim-window.js';
import { turnCursor } from './pick-due.js';

describe('the endpoints a turn reads (design D77)', () => {
  const due = (...accounts: string[]) => accounts.map((account, i) => ({ id: `ep${i}`, account }));
  const read = (accounts: number, perAccount: number, ...of: string[]) =>
    turnEndpoints(due(...of), (e) => e.account, accounts, perAccount, '').endpoints.map((e) => e.id);

  it('reads as many of an account’s endpoints as fill the batch from it', () => {
    expect(turnEndpointsPerAccount(32, 8)).toBe(4);
    expect(turnEndpointsPerAccount(32, 1_000)).toBe(1);
    expect(turnEndpointsPerAccount(30, 8)).toBe(4);
    expect(turnEndpointsPerAccount(4, 1)).toBe(4);
  });

  it('takes the first of each account up to its count, for as many accounts as the turn takes, in due order', () => {
    expect(read(3, 2, 'a', 'a', 'a', 'b', 'a', 'c', 'b', 'd', 'c')).toEqual([
      'ep0',
      'ep1',
      'ep3',
      'ep5',
      'ep6',
      'ep8',
    ]);
    expect(read(1, 1, 'a', 'b', 'a')).toEqual(['ep0']);
    expect(read(2, 1)).toEqual([]);
  });

  it('takes, after a cursor, the accounts whose id comes after it, then from the first on, whatever is due first', () => {
    const after = (cursor: string, accounts: number, perAccount: number, ...of: string[]) =>
      turnEndpoints(due(...of), (e) => e.account, accounts, perAccount, cursor).endpoints.map((e) => e.id);
    // Due first: a, a, d, b, c. After b: c and d; after d: a and b (from the first on).
    expect(after('b', 2, 2, 'a', 'a', 'd', 'b', 'c')).toEqual(['ep2', 'ep4']);
    expect(after('d', 2, 1, 'a', 'a', 'd', 'b', 'c')).toEqual(['ep0', 'ep3']);
    // Every account, when the turn holds them all; the cursor only says which ones first.
    expect(after('', 9, 1, 'c', 'a', 'b')).toEqual(['ep0', 'ep1', 'ep2']);
  });

  it('says whether it left out an account past the cursor, not one from the first id on', () => {
    const leftOut = (cursor: string, accounts: number, ...of: string[]) =>
      turnEndpoints(due(...of), (e) => e.account, accounts, 1, cursor).leftOut;
    expect(leftOut('c', 2, 'd', 'e', 'f')).toBe(true);
    expect(leftOut('c', 3, 'd', 'e', 'f')).toBe(false);
    expect(leftOut('c', 2, 'd', 'a', 'b')).toBe(false);
    expect(leftOut('', 2, 'a', 'b', 'c')).toBe(true);
    expect(leftOut('z', 2, 'a', 'b', 'c')).toBe(false);
  });

  it('orders the accounts after the cursor first, in id order', () => {
    expect(inTurnOrder(['d', 'a', 'c', 'b'], 'b')).toEqual(['c', 'd', 'a', 'b']);
    expect(inTurnOrder(['d', 'a', 'c', 'b'], '')).toEqual(['a', 'b', 'c', 'd']);
    expect(inTurnOrder(['d', 'a', 'c', 'b'], 'z')).toEqual(['a', 'b', 'c', 'd']);
    expect(inTurnOrder(['B', 'a', '_'], 'A')).toEqual(['B', '_', 'a']); // byte order for ASCII
  });

  it('says where the read after the cursor stopped only when the turn left out no account it found past the cursor', () => {
    const at = (account: string | undefined) => () => account;
    // The read met its bound at `k`, its rows not filling what it reads: there.
    expect(turnReadTo('c', false, at('k'))).toBe('k');
    // It did not stop before the last account: nothing to say, its rows filled or not.
    expect(turnReadTo('c', false, at(undefined))).toBeUndefined();
    expect(turnReadTo('c', false, at(undefined), 'e')).toBeUndefined();
    // An account found past the cursor and left out: the next turn starts with it, and where the
    // read stopped is not read.
    const unread = () => {
      throw new Error('read where the read stopped');
    };
    expect(turnReadTo('c', true, unread)).toBeUndefined();
    // Its rows filled what it reads: no further than the last account among them, when that is
    // past the cursor and before where the read stopped.
    expect(turnReadTo('c', false, at('k'), 'e')).toBe('e');
    expect(turnReadTo('c', false, at('k'), 'm')).toBe('k');
    expect(turnReadTo('c', false, at('k'), 'a')).toBe('k');
  });

  it('over turns, takes every account however many more there are than a turn holds', () => {
    // Twelve accounts, each with endpoints due before the next one's, turns of four.
    const accounts = Array.from({ length: 12 }, (_, i) => `acct_${String(i).padStart(2, '0')}`);
    const endpoints = accounts.flatMap((account) =>
      [0, 1, 2].map((n) => ({ id: `${account}/${n}`, account })),
    );
    let cursor = '';
    const seen = new Set<string>();
    for (let turn = 0; turn < 3; turn++) {
      const took = new Set(
        turnEndpoints(endpoints, (e) => e.account, 4, 1, cursor).endpoints.map((e) => e.account),
      );
      expect(took.size).toBe(4);
      for (const account of took) seen.add(account);
      cursor = turnCursor(cursor, [...took], (account) => account);
    }
    expect(seen.size).toBe(12);
    // With the cursor left at the start, the same four each time.
    expect(
      new Set(turnEndpoints(endpoints, (e) => e.account, 4, 1, '').endpoints.map((e) => e.account)),
    ).toEqual(new Set(accounts.slice(0, 4)));
  });
});
