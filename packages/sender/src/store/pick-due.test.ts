import { describe, expect, it } from 'vitest';
import { inAccountTurns, pickDue } from './pick-due.js';

const due = (...endpoints: string[]) => endpoints.map((endpoint, i) => ({ id: `d${i}`, endpoint }));
const pick = (
  rows: { id: string; endpoint: string }[],
  inFlight: [string, number][],
  cap: number,
  limit: number,
) => pickDue(rows, [{ keyOf: (r) => r.endpoint, cap, inFlight: new Map(inFlight) }], limit).map((r) => r.id);

describe('pickDue', () => {
  it('takes deliveries in due order up to the limit', () => {
    expect(pick(due('a', 'b', 'c', 'd'), [], 10, 3)).toEqual(['d0', 'd1', 'd2']);
  });

  it('passes over an endpoint at its cap and takes the ones behind it (invariant 6)', () => {
    expect(pick(due('a', 'a', 'a', 'b', 'a', 'b'), [], 2, 10)).toEqual(['d0', 'd1', 'd3', 'd5']);
  });

  it('counts what is in flight already against the cap', () => {
    expect(
      pick(
        due('a', 'b', 'a', 'b'),
        [
          ['a', 2],
          ['b', 1],
        ],
        2,
        10,
      ),
    ).toEqual(['d1']);
  });

  it('takes nothing at a limit of 0 or less, and copes with an empty queue', () => {
    expect(pick(due('a'), [], 1, 0)).toEqual([]);
    expect(pick(due(), [], 1, 5)).toEqual([]);
  });

  it('stops reading the queue once it has the limit', () => {
    let read = 0;
    function* cursor() {
      for (let i = 0; i < 1000; i++) {
        read++;
        yield { id: `d${i}`, endpoint: `e${i}` };
      }
    }
    expect(pickDue(cursor(), [{ keyOf: (r) => r.endpoint, cap: 1, inFlight: new Map() }], 5)).toHaveLength(5);
    expect(read).toBe(5);
  });

  it('leaves the caller’s in-flight counts as they were', () => {
    const inFlight = new Map([['a', 1]]);
    pickDue(due('a', 'a'), [{ keyOf: (r) => r.endpoint, cap: 5, inFlight }], 5);
    expect(inFlight.get('a')).toBe(1);
  });

  it('keeps every limit at once: a delivery over any of them is passed over', () => {
    // endpoint/account/origin of each due delivery, in due order
    const rows = [
      ['e1', 'A', 'o1'],
      ['e1', 'A', 'o1'],
      ['e2', 'A', 'o1'],
      ['e3', 'A', 'o2'],
      ['e4', 'B', 'o1'],
      ['e5', 'B', 'o3'],
      ['e6', 'C', 'o3'],
    ].map(([endpoint, account, origin], i) => ({ id: `d${i}`, endpoint, account, origin }));
    type R = (typeof rows)[number];
    const picked = pickDue(
      rows,
      [
        { keyOf: (r: R) => r.endpoint!, cap: 1, inFlight: new Map() },
        { keyOf: (r: R) => r.account!, cap: 2, inFlight: new Map([['B', 1]]) },
        { keyOf: (r: R) => r.origin!, cap: 2, inFlight: new Map() },
      ],
      10,
    ).map((r) => r.id);
    // d1: e1 is full; d3: account A has 2; d4: origin o1 has 2 (d0, d2); d5: B has 1 + 1;
    // d6: o3 has 1 (d5) + 1.
    expect(picked).toEqual(['d0', 'd2', 'd5', 'd6']);
  });
});

describe('inAccountTurns', () => {
  const rows = (...accounts: string[]) => accounts.map((account, i) => ({ id: `d${i}`, account }));
  const turns = (...accounts: string[]) =>
    inAccountTurns(rows(...accounts), (r) => r.account).map((r) => r.id);

  it("takes each account's first in the order of their first, then each one's second", () => {
    expect(turns('a', 'a', 'a', 'b', 'a', 'c', 'b')).toEqual(['d0', 'd3', 'd5', 'd1', 'd6', 'd2', 'd4']);
  });

  it('keeps due order when one account has everything, or each has one', () => {
    expect(turns('a', 'a', 'a')).toEqual(['d0', 'd1', 'd2']);
    expect(turns('c', 'a', 'b')).toEqual(['d0', 'd1', 'd2']);
    expect(turns()).toEqual([]);
  });

  it('orders each round after a cursor in its turn order: the accounts after it by id, then from the first on', () => {
    const after = (cursor: string, ...accounts: string[]) =>
      inAccountTurns(rows(...accounts), (r) => r.account, cursor).map((r) => r.id);
    // Due first: c, a, b, c, a. After a: b, c, then a; each one's second after every first.
    expect(after('a', 'c', 'a', 'b', 'c', 'a')).toEqual(['d2', 'd0', 'd1', 'd3', 'd4']);
    expect(after('', 'c', 'a', 'b')).toEqual(['d1', 'd2', 'd0']);
  });
});
