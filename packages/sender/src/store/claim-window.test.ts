import { describe, expect, it } from 'vitest';
import { turnEndpoints, turnEndpointsPerAccount } from './claim-window.js';

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
});
