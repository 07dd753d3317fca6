import { describe, expect, it } from 'vitest';
import { inTurnOrder, turnCursor, turnEndpoints, turnEndpointsPerAccount } from './claim-window.js';

describe('the endpoints a turn reads (design D77)', () => {
  const due = (...accounts: string[]) => accounts.map((account, i) => ({ id: `ep${i}`, account }));
  const read = (accounts: number, perAccount: number, ...of: string[]) =>
    turnEndpoints(due(...of), (e) => e.account, accounts, perAccount).map((e) => e.id);

  it('reads as many of an account’s endpoints as fill the batch from it', () => {
    expect(turnEndpointsPerAccount(32, 8)).toBe(4);
    expect(turnEndpointsPerAccount(32, 1_000)).toBe(1);
    expect(turnEndpointsPerAccount(30, 8)).toBe(4);
    expect(turnEndpointsPerAccount(4, 1)).toBe(4);
  });

  it('takes the first of each account up to its count, for the first accounts only, in due order', () => {
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
      turnEndpoints(due(...of), (e) => e.account, accounts, perAccount, cursor).map((e) => e.id);
    // Due first: a, a, d, b, c. After b: c and d; after d: a and b (from the first on).
    expect(after('b', 2, 2, 'a', 'a', 'd', 'b', 'c')).toEqual(['ep2', 'ep4']);
    expect(after('d', 2, 1, 'a', 'a', 'd', 'b', 'c')).toEqual(['ep0', 'ep3']);
    // Every account, when the turn holds them all; the cursor only says which ones first.
    expect(after('', 9, 1, 'c', 'a', 'b')).toEqual(['ep0', 'ep1', 'ep2']);
  });

  it('orders the accounts after the cursor first, in id order, and moves the cursor to the last one a turn took', () => {
    expect(inTurnOrder(['d', 'a', 'c', 'b'], 'b')).toEqual(['c', 'd', 'a', 'b']);
    expect(inTurnOrder(['d', 'a', 'c', 'b'], '')).toEqual(['a', 'b', 'c', 'd']);
    expect(inTurnOrder(['d', 'a', 'c', 'b'], 'z')).toEqual(['a', 'b', 'c', 'd']);
    expect(inTurnOrder(['B', 'a', '_'], 'A')).toEqual(['B', '_', 'a']); // byte order for ASCII
    const took = (...accounts: string[]) =>
      accounts.map((accountId) => ({ accountId, origin: `o-${accountId}` }));
    expect(turnCursor('b', took('c', 'a', 'd'))).toBe('a');
    expect(turnCursor('b', took('c', 'd'))).toBe('d');
    expect(turnCursor('', took('c', 'a'))).toBe('c');
    expect(turnCursor('b', [])).toBe('b');
  });

  it('stops the cursor at the last account taken at an origin the turn left at its share', () => {
    // R1 and R2 behind relay origin O, whose share let R1 through only; X after them taken twice.
    const took = [
      { accountId: 'r1', origin: 'O' },
      { accountId: 'x', origin: 'x' },
      { accountId: 'x', origin: 'x' },
    ];
    const none = new Map<string, number>();
    expect(turnCursor('', took)).toBe('x');
    expect(turnCursor('', took, { perOrigin: 2, openByOrigin: none })).toBe('x');
    // A share of one: O and x at theirs, r1 the earlier of their last accounts.
    expect(turnCursor('', took, { perOrigin: 1, openByOrigin: none })).toBe('r1');
    // A share of two, with a request already open at O: O at its share.
    expect(turnCursor('', took, { perOrigin: 2, openByOrigin: new Map([['O', 1]]) })).toBe('r1');
    // O's breaker caps it at one; the rest at a share of 56.
    const cappedO = { perOrigin: 56, openByOrigin: none, capped: new Map([['O', 1]]) };
    expect(turnCursor('', took, cappedO)).toBe('r1');
    const two = [...took, { accountId: 'y', origin: 'Y' }, { accountId: 'z', origin: 'Z' }];
    expect(turnCursor('', two, { ...cappedO, capped: new Map([['Y', 1]]) })).toBe('y');
    expect(turnCursor('q', two, cappedO)).toBe('r1');
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
      const took = new Set(turnEndpoints(endpoints, (e) => e.account, 4, 1, cursor).map((e) => e.account));
      expect(took.size).toBe(4);
      for (const account of took) seen.add(account);
      cursor = turnCursor(
        cursor,
        [...took].map((accountId) => ({ accountId, origin: accountId })),
      );
    }
    expect(seen.size).toBe(12);
    // In due order alone, the same four each time.
    expect(new Set(turnEndpoints(endpoints, (e) => e.account, 4, 1).map((e) => e.account))).toEqual(
      new Set(accounts.slice(0, 4)),
    );
  });
});
