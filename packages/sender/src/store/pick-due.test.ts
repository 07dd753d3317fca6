import { describe, expect, it } from 'vitest';
import { sharesOf } from '../../test/helpers/held-up-claim.js';
import {
  accountAtOrigin,
  inAccountTurns,
  nextTurnCursor,
  pickDue,
  shareLimits,
  splitAccountAtOrigin,
  turnCursor,
} from './pick-due.js';
import type { TurnRequest } from './port.js';
import type { ClaimedDelivery } from './records.js';

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

  it("keeps an account within its share of an origin, leaving the rest of the origin's to the others (design D25)", () => {
    // account/origin of each due delivery, in due order: A's backlog at the relay first.
    const rows = [
      ['A', 'relay'],
      ['A', 'relay'],
      ['A', 'relay'],
      ['A', 'own'],
      ['B', 'relay'],
      ['A', 'relay'],
      ['C', 'relay'],
    ].map(([account, origin], i) => ({ id: `d${i}`, account: account!, origin: origin! }));
    type R = (typeof rows)[number];
    const share = shareLimits<R>(
      sharesOf(10, 5, [['A', 1]], [['relay', 1]], { cap: 3, open: [[accountAtOrigin('A', 'relay'), 1]] }),
      (r) => r.account,
      (r) => r.origin,
    );
    const picked = pickDue(rows, [share.accounts, share.origins, share.accountsAtOrigins], 10).map(
      (r) => r.id,
    );
    // A has 1 open at the relay: two more there (d0, d1), none after; its own origin is its own.
    // The relay's share of 5: 1 open, A's 2, then B's and C's.
    expect(picked).toEqual(['d0', 'd1', 'd3', 'd4', 'd6']);
  });

  it("holds an account at an origin to its breaker's cap there, and no other account there (design D27)", () => {
    const rows = [
      ['A', 'relay'],
      ['A', 'relay'],
      ['B', 'relay'],
      ['A', 'own'],
      ['C', 'relay'],
      ['B', 'relay'],
    ].map(([account, origin], i) => ({ id: `d${i}`, account: account!, origin: origin! }));
    type R = (typeof rows)[number];
    const capped = (caps: [string, number][]) => {
      const share = shareLimits<R>(
        {
          ...sharesOf(10, 10, [], [], { cap: 8, open: [[accountAtOrigin('C', 'relay'), 1]] }),
          capped: { endpoints: new Map(), accountsAtOrigins: new Map(caps) },
        },
        (r) => r.account,
        (r) => r.origin,
      );
      return pickDue(rows, [share.accounts, share.origins, share.accountsAtOrigins], 10).map((r) => r.id);
    };
    // A open there (none), B half-open there (one): A's own server and C are not held.
    const relayA = accountAtOrigin('A', 'relay');
    expect(
      capped([
        [relayA, 0],
        [accountAtOrigin('B', 'relay'), 1],
      ]),
    ).toEqual(['d2', 'd3', 'd4']);
    // C half-open there with a request of its already out: none more.
    expect(
      capped([
        [relayA, 0],
        [accountAtOrigin('C', 'relay'), 1],
      ]),
    ).toEqual(['d2', 'd3', 'd5']);
  });

  it('keys an account at an origin apart from every other account and origin', () => {
    const keys = [
      accountAtOrigin('acct_1', 'https://a.example.com'),
      accountAtOrigin('acct_1', 'https://a.example.com:8443'),
      accountAtOrigin('acct_2', 'https://a.example.com'),
      accountAtOrigin('acct_1', 'https://[2001:db8::1]:9443'),
      // An account id is the store's to choose: a space in it is its own.
      accountAtOrigin('acct 1', 'https://a.example.com'),
    ];
    expect(new Set(keys).size).toBe(5);
    expect(keys.map(splitAccountAtOrigin)).toEqual([
      ['acct_1', 'https://a.example.com'],
      ['acct_1', 'https://a.example.com:8443'],
      ['acct_2', 'https://a.example.com'],
      ['acct_1', 'https://[2001:db8::1]:9443'],
      ['acct 1', 'https://a.example.com'],
    ]);
  });
});

describe('inAccountTurns', () => {
  const rows = (...accounts: string[]) => accounts.map((account, i) => ({ id: `d${i}`, account }));
  const turns = (after: string, ...accounts: string[]) =>
    inAccountTurns(rows(...accounts), (r) => r.account, after).map((r) => r.id);

  it("takes each account's first in the turn order, then each one's second, each account's in due order", () => {
    expect(turns('', 'a', 'a', 'a', 'b', 'a', 'c', 'b')).toEqual(['d0', 'd3', 'd5', 'd1', 'd6', 'd2', 'd4']);
    expect(turns('', 'a', 'a', 'a')).toEqual(['d0', 'd1', 'd2']);
    expect(turns('')).toEqual([]);
  });

  it('orders each round after a cursor in its turn order: the accounts after it by id, then from the first on', () => {
    // Due first: c, a, b, c, a. After a: b, c, then a; each one's second after every first.
    expect(turns('a', 'c', 'a', 'b', 'c', 'a')).toEqual(['d2', 'd0', 'd1', 'd3', 'd4']);
    expect(turns('', 'c', 'a', 'b')).toEqual(['d1', 'd2', 'd0']);
  });
});

describe('turnCursor', () => {
  const self = (account: string) => account;

  it('moves the cursor to the last account a turn took in its turn order', () => {
    expect(turnCursor('b', ['c', 'a', 'd'], self)).toBe('a');
    expect(turnCursor('b', ['c', 'd'], self)).toBe('d');
    expect(turnCursor('', ['c', 'a'], self)).toBe('c');
    expect(turnCursor('b', [], self)).toBe('b');
  });

  it("moves the cursor to where the store's read after it stopped, when there is such a place", () => {
    // None taken: past the accounts read, none of which had anything due.
    expect(turnCursor('c', [], self, undefined, 'k')).toBe('k');
    // Went on from the first id on: to where the read stopped, not back to `a`.
    expect(turnCursor('c', ['d', 'e', 'a'], self, undefined, 'k')).toBe('k');
    expect(turnCursor('c', ['d', 'e'], self, undefined, 'k')).toBe('k');
    // One taken past it, read in part: to where the read stopped, so that one is read again.
    expect(turnCursor('c', ['d', 'm'], self, undefined, 'k')).toBe('k');
  });

  it('stops the cursor at the last account taken at an origin the turn left at its share', () => {
    // R1 and R2 behind relay origin O, whose share let R1 through only; X after them taken twice.
    type Took = { accountId: string; origin: string };
    const took: Took[] = [
      { accountId: 'r1', origin: 'O' },
      { accountId: 'x', origin: 'x' },
      { accountId: 'x', origin: 'x' },
    ];
    const cursor = (
      t: Took[],
      after: string,
      cap: number,
      inFlight = new Map<string, number>(),
      caps?: Map<string, number>,
    ) => turnCursor(after, t, (x) => x.accountId, { keyOf: (x) => x.origin, cap, inFlight, caps });
    expect(turnCursor('', took, (t) => t.accountId)).toBe('x');
    expect(cursor(took, '', 2)).toBe('x');
    // A share of one: O and x at theirs, r1 the earlier of their last accounts.
    expect(cursor(took, '', 1)).toBe('r1');
    // A share of two, with a request already open at O: O at its share.
    expect(cursor(took, '', 2, new Map([['O', 1]]))).toBe('r1');
    // O capped at one in place of its share; the rest at a share of 56.
    const cappedO = new Map([['O', 1]]);
    expect(cursor(took, '', 56, undefined, cappedO)).toBe('r1');
    const two = [...took, { accountId: 'y', origin: 'Y' }, { accountId: 'z', origin: 'Z' }];
    expect(cursor(two, '', 56, undefined, new Map([['Y', 1]]))).toBe('y');
    expect(cursor(two, 'q', 56, undefined, cappedO)).toBe('r1');
    // Stopped at a full origin, whatever the read after the cursor came to.
    const origins = { keyOf: (x: Took) => x.origin, cap: 1, inFlight: new Map<string, number>() };
    expect(turnCursor('', took, (x) => x.accountId, origins, 'z')).toBe('r1');
    // The turn's last account taken at a full origin, others there perhaps left out after it.
    expect(turnCursor('', [took[0]!], (x) => x.accountId, origins, 'z')).toBe('r1');
  });
});

describe('nextTurnCursor', () => {
  const claimed = (accountId: string, origin: string) =>
    ({ delivery: { accountId }, origin }) as ClaimedDelivery;
  const request = (shares?: TurnRequest['shares']): TurnRequest => ({
    now: 0,
    limit: 3,
    leaseMs: 1,
    perEndpointCap: 8,
    after: '',
    shares,
  });
  const shares = (perOrigin: number, open: [string, number][] = [], capped: [string, number][] = []) => ({
    ...sharesOf(56, perOrigin, [], open),
    capped: { endpoints: new Map<string, number>(), origins: new Map(capped), accountsAtOrigins: new Map() },
  });
  // R1 behind relay origin O, X after it at an origin of its own.
  const took = [claimed('r1', 'O'), claimed('x', 'X')];

  it("counts the origins' shares the turn was asked with: what was open there and the caps in their place", () => {
    expect(nextTurnCursor(request(), took)).toBe('x');
    expect(nextTurnCursor(request(shares(2)), took)).toBe('x');
    // O at its share, with one open there before the turn, or capped at one.
    expect(nextTurnCursor(request(shares(2, [['O', 1]])), took)).toBe('r1');
    expect(nextTurnCursor(request(shares(56, [], [['O', 1]])), took)).toBe('r1');
  });

  it('goes to where the read after the cursor stopped, unless an origin left at its share stops it first', () => {
    expect(nextTurnCursor(request(shares(2)), took, 'z')).toBe('z');
    expect(nextTurnCursor(request(shares(1)), took, 'z')).toBe('r1');
  });
});
