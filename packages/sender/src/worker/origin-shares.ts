/**
 * What each origin, and each account at an origin, may hold after one claim (design D25). One
 * account's requests at an origin hold at most `perAccountAtOrigin` of the origin's `perOrigin`,
 * which leaves a reserve to the others there; this divides that share among the accounts there, so
 * that several hold no more of it than one would. Decided before each of the store's claims from
 * what the worker has open; pure.
 *
 * A claim takes at most one request past the accounts' share at an origin (PAST_SHARE_A_CLAIM), and
 * at an origin where they already hold more, one more than they hold; of what is left of the share
 * there (`perAccountAtOrigin` less every account's requests there), each account with requests
 * there may add its part (divided among them), while an account with none there is bound by the
 * origin's cap, its share there and its breaker's. So the reserve goes a request a claim, to the
 * accounts with none there yet. With the share a bound per account only, one customer's endpoints
 * that hang at a relay held 48 of its 56 and a second customer's the other 8 in their first
 * claims, and a third customer's click there waited for their deadline, 30 s
 * (bench/noisy-neighbour.mjs, `aAccounts: 2, bAtStalled: true`). The price: while the accounts
 * there hold the whole share, each one holding requests there adds none until some of its own or
 * another's end, a healthy customer's burst there going out a request at a time; an account alone
 * at an origin keeps the whole share.
 */
import { splitAccountAtOrigin } from '../store/pick-due.js';
import type { ClaimShares } from '../store/port.js';

/** How many requests past the accounts' share one claim may take at an origin. */
export const PAST_SHARE_A_CLAIM = 1;

type OriginShares = Pick<
  ClaimShares,
  'perOrigin' | 'perAccountAtOrigin' | 'openByOrigin' | 'openByAccountAtOrigin'
>;

/**
 * The claim's `perOrigin` (at an origin that holds no more than the accounts' share) and the caps
 * in place of it and of `perAccountAtOrigin`: of each origin that holds more, and of each account
 * at an origin where it has requests open or its breaker holds it (`breakerCaps`, keyed as
 * `openByAccountAtOrigin`; the lower of the two), for ClaimShares' `capped`.
 */
export function originShares(
  shares: OriginShares,
  breakerCaps: ReadonlyMap<string, number>,
): { perOrigin: number; origins: Map<string, number>; accountsAtOrigins: Map<string, number> } {
  const share = shares.perAccountAtOrigin;
  const perOrigin = Math.min(shares.perOrigin, share + PAST_SHARE_A_CLAIM);
  const origins = new Map<string, number>();
  for (const [origin, open] of shares.openByOrigin) {
    const cap = Math.min(shares.perOrigin, open + PAST_SHARE_A_CLAIM);
    if (cap > perOrigin) origins.set(origin, cap);
  }
  const pairs = [...shares.openByAccountAtOrigin].map(([pair, open]) => ({
    pair,
    open,
    origin: splitAccountAtOrigin(pair)[1],
  }));
  const accountsAt = new Map<string, number>();
  for (const { origin } of pairs) accountsAt.set(origin, (accountsAt.get(origin) ?? 0) + 1);
  const accountsAtOrigins = new Map<string, number>();
  for (const { pair, open, origin } of pairs) {
    const left = Math.max(0, share - (shares.openByOrigin.get(origin) ?? 0));
    const cap = Math.min(share, open + Math.floor(left / accountsAt.get(origin)!));
    if (cap < share) accountsAtOrigins.set(pair, cap);
  }
  for (const [pair, cap] of breakerCaps) {
    accountsAtOrigins.set(pair, Math.min(cap, accountsAtOrigins.get(pair) ?? share));
  }
  return { perOrigin, origins, accountsAtOrigins };
}
