import { describe, expect, it } from 'vitest';
import { accountAtOrigin } from '../store/pick-due.js';
import { originShares } from './origin-shares.js';

const relay = 'https://relay.example.com';
const at = (account: string) => accountAtOrigin(account, relay);

/** originShares at the default shares (56 an origin, 48 an account there) with `open` there. */
const sharesWith = (open: [string, number][], breakerCaps: [string, number][] = [], perOrigin = 56) => {
  const total = open.reduce((sum, [, n]) => sum + n, 0);
  return originShares(
    {
      perOrigin,
      perAccountAtOrigin: 48,
      openByOrigin: new Map(total > 0 ? [[relay, total]] : []),
      openByAccountAtOrigin: new Map(open.map(([account, n]) => [at(account), n])),
    },
    new Map(breakerCaps.map(([account, cap]) => [at(account), cap])),
  );
};

describe("an origin's share divided among the accounts there (design D25)", () => {
  it('leaves an account alone at an origin its whole share, and the claim one request past it', () => {
    expect(sharesWith([['acct_a', 10]])).toEqual({
      origins: new Map([[relay, 49]]),
      accountsAtOrigins: new Map(),
    });
    expect(sharesWith([['acct_a', 48]]).origins).toEqual(new Map([[relay, 49]]));
    // Nothing open there: no cap but the shares.
    expect(sharesWith([])).toEqual({ origins: new Map(), accountsAtOrigins: new Map() });
  });

  it("gives an account holding the share's whole, and one new beside it, nothing more there", () => {
    // A customer's hanging requests hold the share; a second one took the claim's one past it.
    const { origins, accountsAtOrigins } = sharesWith([
      ['acct_a', 48],
      ['acct_b', 1],
    ]);
    expect(accountsAtOrigins).toEqual(new Map([[at('acct_b'), 1]]));
    // A third customer's request: one more, from the reserve.
    expect(origins).toEqual(new Map([[relay, 50]]));
  });

  it('divides what is left of the share among the accounts with requests there', () => {
    const { origins, accountsAtOrigins } = sharesWith([
      ['acct_a', 1],
      ['acct_b', 1],
      ['acct_c', 6],
    ]);
    // 40 left of 48, a third each (13): together no more than the share.
    expect(accountsAtOrigins).toEqual(
      new Map([
        [at('acct_a'), 14],
        [at('acct_b'), 14],
        [at('acct_c'), 19],
      ]),
    );
    expect(origins).toEqual(new Map([[relay, 49]]));
  });

  it("keeps the breaker's cap where it is lower, and gives it to an account with nothing open there", () => {
    const { accountsAtOrigins } = sharesWith(
      [
        ['acct_a', 1],
        ['acct_b', 1],
      ],
      [
        ['acct_a', 0],
        ['acct_b', 30],
        ['acct_c', 1],
      ],
    );
    expect(accountsAtOrigins).toEqual(
      new Map([
        [at('acct_a'), 0],
        [at('acct_b'), 24],
        [at('acct_c'), 1],
      ]),
    );
  });

  it('caps no origin where the share is the whole of it (no reserve)', () => {
    expect(sharesWith([['acct_a', 48]], [], 48).origins).toEqual(new Map());
  });
});
