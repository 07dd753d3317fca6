/**
 * Portal links (design D54): the platform asks for a one-time, short-lived link that signs one
 * account's user into the dashboard without an API key. The token has 256 random bits and only its
 * SHA-256 is stored (as for API keys, design D21); opening the link takes the stored row, so it
 * signs in once, across every process sharing the store.
 */
import { randomBytes } from 'node:crypto';
import { hashApiKey } from '../accounts.js';
import type { Clock } from '../clock.js';
import { SenderError } from '../errors.js';
import type { SenderStore, TakenPortalToken } from '../store/port.js';
import type { AccountRecord } from '../store/records.js';

/** How long a link works by default: five minutes to follow it. */
export const DEFAULT_PORTAL_TTL_SECONDS = 300;
/** The longest a link may work: an hour. */
export const MAX_PORTAL_TTL_SECONDS = 3_600;
export const PORTAL_TOKEN_PREFIX = 'lhp_';

export interface PortalSession {
  /** The link's token, shown this once; only its hash is stored. */
  token: string;
  expiresAt: number;
}

/** Why a link does not sign in: unknown or used already, past its time, or its account is gone. */
export type PortalRefusal = 'not_valid' | 'expired' | 'account_gone';

export type PortalOpened = { ok: true; account: AccountRecord } | { ok: false; reason: PortalRefusal };

export interface PortalSessions {
  /**
   * A one-time link for the account's dashboard, working `ttlSeconds` (default 300, at most 3,600).
   *
   * @example
   * const { token, expiresAt } = await sender.createPortalSession(accountId, { ttlSeconds: 120 });
   * // send the user to `${serviceUrl}/portal?token=${token}`
   */
  createPortalSession(accountId: string, options?: { ttlSeconds?: number }): Promise<PortalSession>;
  /** Uses a link up: its account when it may sign in, else why not. A link opens once only. */
  openPortalSession(token: string): Promise<PortalOpened>;
}

/** Whether a link taken at `now` signs in: a pure decision over what the store answered. */
export function decidePortalLink(
  taken: TakenPortalToken | null,
  account: AccountRecord | null,
  now: number,
): PortalOpened {
  if (!taken) return { ok: false, reason: 'not_valid' };
  if (taken.expiresAt <= now) return { ok: false, reason: 'expired' };
  if (!account) return { ok: false, reason: 'account_gone' };
  return { ok: true, account };
}

export function portalSessions(deps: { store: SenderStore; clock: Clock }): PortalSessions {
  const { store, clock } = deps;
  return {
    async createPortalSession(accountId, options = {}) {
      const ttl = options.ttlSeconds ?? DEFAULT_PORTAL_TTL_SECONDS;
      if (!Number.isInteger(ttl) || ttl < 1 || ttl > MAX_PORTAL_TTL_SECONDS) {
        throw new SenderError(
          'invalid_request',
          `ttl_seconds must be a whole number from 1 to ${MAX_PORTAL_TTL_SECONDS} (an hour)`,
        );
      }
      const now = clock.now();
      const token = PORTAL_TOKEN_PREFIX + randomBytes(32).toString('base64url');
      const expiresAt = now + ttl * 1000;
      if (!(await store.createPortalToken({ hash: hashApiKey(token), accountId, now, expiresAt }))) {
        throw new SenderError('not_found', `no account ${accountId}`);
      }
      return { token, expiresAt };
    },

    async openPortalSession(token) {
      if (!token.startsWith(PORTAL_TOKEN_PREFIX) || token.length > 200) {
        return { ok: false, reason: 'not_valid' };
      }
      const taken = await store.takePortalToken(hashApiKey(token));
      const account = taken ? await store.getAccount(taken.accountId) : null;
      return decidePortalLink(taken, account, clock.now());
    },
  };
}
