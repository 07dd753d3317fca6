/**
 * What each account may hold at each origin in one claim (design D25). One account's requests at
 * an origin hold at most `perAccountAtOrigin` of the origin's `perOrigin`, which leaves a reserve
 * to the others there; this divides that share among the accounts, so that several hold no more
 * of it than one would. Decided before each claim from what the worker has open; pure.
 *
 * At an origin where the worker has requests open, the accounts with requests there may add, each,
 * its part of what is left of the share (`perAccountAtOrigin` less every account's there, divided
 * among them), and the claim takes at most one request past the share there (whatever accounts
 * new there are due). With the share a bound per account only, one customer's endpoints that hang
 * at a relay held 48 of its 56 and a second customer's the other 8 in their first claim, and a
 * third customer's click there waited for their deadline, 30 s (bench/noisy-neighbour.mjs,
 * `aAccounts: 2, bAtStalled: true`); now the reserve goes a request at a time, to the accounts
 * with none there yet. An account alone at an origin keeps the whole share.
 */
import { splitAccountAtOrigin } from '../store/pick-due.js';
import type { ClaimShares } from '../store/port.js';

/** How many requests past the accounts' share one claim may take at an origin. */
export const PAST_SHARE_A_CLAIM = 1;

/**
 * The caps of each origin with requests open, and of each account at an origin where it has
 * requests open or its breaker holds it (`breakerCaps`, keyed as `openByAccountAtOrigin`; the
 * lower of the two), for ClaimShares' `capped`.
 */
export function originShares(
  shares: Pick<ClaimShares, 'perOrigin' | 'perAccountAtOrigin' | 'openByOrigin' | 'openByAccountAtOrigin'>,
  breakerCaps: ReadonlyMap<string, number>,
): { origins: Map<string, number>; accountsAtOrigins: Map<string, number> } {
  const share = shares.perAccountAtOrigin;
  const left = (origin: string) => Math.max(0, share - (shares.openByOrigin.get(origin) ?? 0));
  const origins = new Map<string, number>();
  for (const [origin, open] of shares.openByOrigin) {
    const cap = Math.min(shares.perOrigin, open + left(origin) + PAST_SHARE_A_CLAIM);
    if (cap < shares.perOrigin) origins.set(origin, cap);
  }
  const accountsAt = new Map<string, number>();
  for (const pair of shares.openByAccountAtOrigin.keys()) {
    const origin = splitAccountAtOrigin(pair)[1];
    accountsAt.set(origin, (accountsAt.get(origin) ?? 0) + 1);
  }
  const accountsAtOrigins = new Map<string, number>();
  for (const [pair, open] of shares.openByAccountAtOrigin) {
    const origin = splitAccountAtOrigin(pair)[1];
    const cap = Math.min(share, open + Math.floor(left(origin) / accountsAt.get(origin)!));
    if (cap < share) accountsAtOrigins.set(pair, cap);
  }
  for (const [pair, cap] of breakerCaps) {
    accountsAtOrigins.set(pair, Math.min(cap, accountsAtOrigins.get(pair) ?? share));
  }
  return { origins, accountsAtOrigins };
}
