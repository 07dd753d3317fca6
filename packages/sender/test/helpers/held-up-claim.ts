/**
 * A claim held up behind an account's backlog (design D25): that account at the claimer's share,
 * so none of its due deliveries may be taken and a backlog longer than the walk makes the claim
 * read past it.
 *
 * @example
 * const claimed = await claimPastShare(store, T0 + HELD_UP_BACKLOG + 1, 'acct_a');
 */
import { claimWalk, claimWindow } from '../../src/store/claim-window.js';
import type { ClaimShares, SenderStore } from '../../src/store/port.js';

/** More due deliveries than claimPastShare's claim walks: a backlog of that size holds it up. */
export const HELD_UP_BACKLOG = claimWalk(claimWindow(8)) + 20;

/**
 * A claimer's shares: its limits per account and per origin, and what it has open of each; an
 * account's share at an origin all of the origin's, unless `atOrigin` gives it and what is open
 * (keyed by accountAtOrigin).
 */
export const sharesOf = (
  perAccount: number,
  perOrigin: number,
  openByAccount: [string, number][] = [],
  openByOrigin: [string, number][] = [],
  atOrigin: { cap: number; open: [string, number][] } = { cap: perOrigin, open: [] },
): ClaimShares => ({
  perAccount,
  perOrigin,
  perAccountAtOrigin: atOrigin.cap,
  openByAccount: new Map(openByAccount),
  openByOrigin: new Map(openByOrigin),
  openByAccountAtOrigin: new Map(atOrigin.open),
});

/** A claimer's shares, 8 per account, with `heldAccount` at its share; `perOrigin` per origin. */
export const atShare = (heldAccount: string, perOrigin = 8): ClaimShares =>
  sharesOf(8, perOrigin, [[heldAccount, 8]]);

export const claimPastShare = (store: SenderStore, now: number, heldAccount: string) =>
  store.claimDue({ now, limit: 8, leaseMs: 45_000, perEndpointCap: 8, shares: atShare(heldAccount) });
