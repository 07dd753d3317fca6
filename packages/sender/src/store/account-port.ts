/**
 * The catalogue's accounts and API keys (design D37): one part of the store port (port.ts), kept
 * in a file of its own.
 */
import type { Page } from './port.js';
import type { AccountRecord, ApiKeyRecord } from './records.js';

export type NewAccount = Pick<AccountRecord, 'id' | 'name' | 'plan' | 'apiKeyHash'> & {
  now: number;
  /** The first API key's id and first characters; by default derived from the account id, and none. */
  apiKeyId?: string;
  apiKeyPrefix?: string | null;
};

/** A new API key: its id, its first characters and its hash (design D37). */
export interface NewApiKey {
  id: string;
  prefix: string;
  hash: string;
}

/** An API key that signs requests in, with its account. */
export interface KeyHolder {
  account: AccountRecord;
  key: ApiKeyRecord;
}

/** Accounts and their API keys. */
export interface AccountCatalogue {
  /** Rejects when the API key hash is already taken. */
  createAccount(input: NewAccount): Promise<AccountRecord>;
  /** The account, unless it does not exist or is being deleted. */
  getAccount(id: string): Promise<AccountRecord | null>;
  /** The account whose API key hashes to `apiKeyHash`, or null. */
  findAccountByApiKeyHash(apiKeyHash: string, now?: number): Promise<AccountRecord | null>;
  /** Accounts by id, a page at a time (`cursor`: the last id of the previous page). */
  listAccounts(page: { cursor?: string; limit: number }): Promise<Page<AccountRecord>>;

  /** The key with this hash and its account, if the key works at `now` (not revoked nor expired). */
  findApiKey(keyHash: string, now: number): Promise<KeyHolder | null>;
  /** The same by key id: whether a session signed in with it still stands (design D37). */
  getApiKey(keyId: string, now: number): Promise<KeyHolder | null>;
  /** Records that the key signed a request in at `now`. */
  touchApiKey(keyId: string, now: number): Promise<void>;
  /** Every key of the account, revoked and expired ones included, oldest first. */
  listApiKeys(accountId: string): Promise<ApiKeyRecord[]>;
  /**
   * Adds `key` and makes the account's other working keys stop at `expireOthersAt` (at once when it
   * is `now`), in one transaction. Null when the account does not exist.
   */
  rotateApiKey(
    accountId: string,
    key: NewApiKey,
    options: { now: number; expireOthersAt: number },
  ): Promise<{ key: ApiKeyRecord; others: ApiKeyRecord[] } | null>;
  /** Revokes one key of the account; null when the account has no such key. */
  revokeApiKey(accountId: string, keyId: string, now: number): Promise<ApiKeyRecord | null>;
  /**
   * The first step of deleting an account (design D37): its keys are revoked and it reads as gone
   * from now on. False when there is no such account (or it is gone already).
   */
  markAccountDeleted(accountId: string, now: number): Promise<boolean>;
  /**
   * One bounded step of deleting a marked account: up to `limit` deliveries (with their attempts),
   * else up to `limit` events, else its endpoints, keys and the account itself. Answers the rows
   * removed; 0 once nothing is left.
   */
  deleteAccountStep(accountId: string, limit: number): Promise<number>;
}
