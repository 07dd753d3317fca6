/**
 * Accounts and their API keys, as the platform administers them (design D37): list accounts, list
 * an account's keys, rotate its key with a grace for the old one, revoke a key, delete an account
 * with everything it owns, a bounded step at a time. Part of the engine, reached through
 * `createSender`; the platform routes and the CLI call these.
 */
import { newApiKey } from '../accounts.js';
import type { Clock } from '../clock.js';
import { isPageCursor, pageCursorProblem } from '../domain/page-cursor.js';
import { SenderError } from '../errors.js';
import type { Page, SenderStore } from '../store/port.js';
import { inSteps } from '../store/prune-steps.js';
import type { AccountRecord, ApiKeyRecord } from '../store/records.js';

/** How long a rotated-out key keeps working by default: one hour to deploy the new one. */
export const DEFAULT_KEY_GRACE_SECONDS = 3_600;
/** The longest grace a rotation may give the old key: a day. */
export const MAX_KEY_GRACE_SECONDS = 86_400;
/** Rows one step of an account's deletion removes: each step is a short transaction of its own. */
export const DELETE_STEP = 1_000;

/** A key as the engine shows it: its record and whether it works now. */
export interface ApiKey extends ApiKeyRecord {
  /** `expiring`: rotated out, working until `expiresAt`. */
  status: 'active' | 'expiring' | 'expired' | 'revoked';
}

export interface RotatedKey {
  /** The new key, shown this once; only its hash is stored. */
  apiKey: string;
  key: ApiKey;
  /** The keys that worked before, now ending at the grace's end (or revoked, with no grace). */
  previous: ApiKey[];
}

function withStatus(k: ApiKeyRecord, now: number): ApiKey {
  const status =
    k.revokedAt !== null
      ? 'revoked'
      : k.expiresAt === null
        ? 'active'
        : k.expiresAt > now
          ? 'expiring'
          : 'expired';
  return { ...k, status };
}

export interface AccountAdministration {
  /** Accounts by id, a page at a time (default 100, at most 1,000). */
  listAccounts(page?: { cursor?: string; limit?: number }): Promise<Page<AccountRecord>>;
  /** Every key of the account: ids, first characters, times; never a key itself. */
  listApiKeys(accountId: string): Promise<ApiKey[]>;
  /**
   * A new key for the account, shown once; its other keys keep working for `graceSeconds`
   * (default 3,600; 0 ends them at once; at most 86,400).
   *
   * @example
   * const { apiKey, previous } = await sender.rotateApiKey(accountId, { graceSeconds: 600 });
   */
  rotateApiKey(accountId: string, options?: { graceSeconds?: number }): Promise<RotatedKey>;
  /** Revokes one key at once; the dashboard sessions signed in with it end with it. */
  revokeApiKey(accountId: string, keyId: string): Promise<ApiKey>;
  /**
   * Deletes the account: its keys stop at once, then its endpoints, events, deliveries and their
   * attempts go, a bounded step at a time. Run again, it finishes a deletion cut short.
   */
  deleteAccount(accountId: string): Promise<{ removed: number }>;
}

export function accountAdministration(deps: { store: SenderStore; clock: Clock }): AccountAdministration {
  const { store, clock } = deps;
  const noAccount = (id: string) => new SenderError('not_found', `no account ${id}`);
  const exists = async (id: string) => {
    if (!(await store.getAccount(id))) throw noAccount(id);
  };
  return {
    async listAccounts(page = {}) {
      const limit = page.limit ?? 100;
      if (!Number.isInteger(limit) || limit < 1 || limit > 1_000) {
        throw new SenderError('invalid_request', 'limit must be a whole number from 1 to 1000');
      }
      if (page.cursor !== undefined && !isPageCursor('acct', page.cursor)) {
        throw new SenderError('invalid_request', pageCursorProblem('acct'));
      }
      return store.listAccounts({ limit, ...(page.cursor !== undefined ? { cursor: page.cursor } : {}) });
    },

    async listApiKeys(accountId) {
      await exists(accountId);
      const now = clock.now();
      return (await store.listApiKeys(accountId)).map((k) => withStatus(k, now));
    },

    async rotateApiKey(accountId, options = {}) {
      const grace = options.graceSeconds ?? DEFAULT_KEY_GRACE_SECONDS;
      if (!Number.isInteger(grace) || grace < 0 || grace > MAX_KEY_GRACE_SECONDS) {
        throw new SenderError(
          'invalid_request',
          `grace_seconds must be a whole number from 0 to ${MAX_KEY_GRACE_SECONDS} (a day)`,
        );
      }
      const now = clock.now();
      const { apiKey, key } = newApiKey(now);
      const rotated = await store.rotateApiKey(accountId, key, { now, expireOthersAt: now + grace * 1000 });
      if (!rotated) throw noAccount(accountId);
      return {
        apiKey,
        key: withStatus(rotated.key, now),
        previous: rotated.others.map((k) => withStatus(k, now)),
      };
    },

    async revokeApiKey(accountId, keyId) {
      await exists(accountId);
      const now = clock.now();
      const key = await store.revokeApiKey(accountId, keyId, now);
      if (!key) throw new SenderError('not_found', `account ${accountId} has no key ${keyId}`);
      return withStatus(key, now);
    },

    async deleteAccount(accountId) {
      if (!(await store.markAccountDeleted(accountId, clock.now()))) throw noAccount(accountId);
      return { removed: await inSteps(() => store.deleteAccountStep(accountId, DELETE_STEP), 1) };
    },
  };
}
