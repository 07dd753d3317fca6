import { describe, expect, it } from 'vitest';
import { accountAtOrigin } from '../store/pick-due.js';
import { originShares } from './origin-shares.js';

const relay = 'https://relay.example.com';
const at = (account: string) => accountAtOrigin(account, relay);

/**
 * originShares at the default shares (56 an origin, 48 an account there) with `open`: each
 * account's requests open at the relay, or at the origin given.
 */
const sharesWith = (
  open: [account: string, n: number, origin?: string][],
  breakerCaps: [string, number][] = [],
  perOrigin = 56,
) => {
  const openByOrigin = new Map<string, number>();
  for (const [, n, origin = relay] of open) openByOrigin.set(origin, (openByOrigin.get(origin) ?? 0) + n);
  return originShares(
    {
      perOrigin,
      perAccountAtOrigin: 48,
      openByOrigin,
      openByAccountAtOrigin: new Map(
        open.map(([account, n, origin = relay]) => [accountAtOrigin(account, origin), n]),
      ),
    },
    new Map(breakerCaps.map(([account, cap]) => [at(account), cap])),
  );
};

describe("an origin's share divided among the accounts there (design D25)", () => {
  it('leaves an account alone at an origin its whole share, and a claim one request past it', () => {
    // Every origin at most one past the accounts' share: 49, with nothing open there or some.
    const alone = { perOrigin: 49, origins: new Map(), accountsAtOrigins: new Map() };
    expect(sharesWith([])).toEqual(alone);
    expect(sharesWith([['acct_a', 10]])).toEqual(alone);
    expect(sharesWith([['acct_a', 48]])).toEqual(alone);
  });

  it("gives an account holding the share's whole, and one new beside it, nothing more there", () => {
    // A customer's hanging requests hold the share; a second one took the claim's one past it.
    const { origins, accountsAtOrigins } = sharesWith([
      ['acct_a', 48],
      ['acct_b', 1],
    ]);
    expect(accountsAtOrigins).toEqual(new Map([[at('acct_b'), 1]]));
    // A third customer's request: one more, from the reserve, up to the origin's 56.
    expect(origins).toEqual(new Map([[relay, 50]]));
    expect(
      sharesWith([
        ['acct_a', 48],
        ['acct_b', 1],
        ['acct_c', 7],
      ]).origins,
    ).toEqual(new Map([[relay, 56]]));
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
    expect(origins).toEqual(new Map());
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

  it('divides at each origin apart, what is left even when it is less than a request each', () => {
    const other = 'https://other.example.com';
    const { accountsAtOrigins } = sharesWith([
      ['acct_a', 24],
      ['acct_b', 23],
      ['acct_a', 2, other],
    ]);
    // One left at the relay for two: neither adds (a claim there may still take one past the
    // share, for an account with none there); acct_a alone at the other keeps its whole share.
    expect(accountsAtOrigins).toEqual(
      new Map([
        [at('acct_a'), 24],
        [at('acct_b'), 23],
      ]),
    );
  });

  it('caps nothing past the share where the share is the whole origin (no reserve)', () => {
    expect(sharesWith([['acct_a', 48]], [], 48)).toEqual({
      perOrigin: 48,
      origins: new Map(),
      accountsAtOrigins: new Map(),
    });
  });
});
