/**
 * Accounts, plans and API keys for the management API (design D19). An API key is shown
 * once, at creation; the store keeps only its SHA-256. A key has 256 random bits, so a fast hash is
 * enough: nothing short of the key finds a preimage (the same reasoning as GitHub's token storage).
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { type Clock, systemClock } from './clock.js';
import { newId } from './domain/ids.js';
import { SenderError } from './errors.js';
import type { Catalogue, KeyHolder, NewApiKey } from './store/port.js';
import { type AccountRecord, PLANS, type Plan } from './store/records.js';

export { PLANS, type Plan };

/** design R1: webhooks are offered on the Business plan and above. */
export const WEBHOOK_PLANS: readonly Plan[] = ['business', 'enterprise'];

export const API_KEY_PREFIX = 'lhk_';
/** How much of a key is kept in clear to recognise it: `lhk_` and 8 characters (48 of its 256 bits). */
export const API_KEY_SHOWN_CHARACTERS = API_KEY_PREFIX.length + 8;

export function planAllowsWebhooks(plan: Plan): boolean {
  return WEBHOOK_PLANS.includes(plan);
}

export function isPlan(value: unknown): value is Plan {
  return typeof value === 'string' && (PLANS as readonly string[]).includes(value);
}

export function hashApiKey(apiKey: string): string {
  return hash('sha256', apiKey, 'hex');
}

export interface CreatedAccount {
  account: AccountRecord;
  /** Shown once; only its hash is stored. */
  apiKey: string;
}

/**
 * Creates an account with a fresh API key.
 *
 * @example
 * const { account, apiKey } = await createAccount(store, { name: 'Acme', plan: 'business' });
 */
export async function createAccount(
  store: Pick<Catalogue, 'createAccount'>,
  input: { name: unknown; plan: unknown },
  clock: Clock = systemClock,
): Promise<CreatedAccount> {
  const name = typeof input.name === 'string' ? input.name.trim() : '';
  if (name.length === 0 || name.length > 200) {
    throw new SenderError('invalid_request', 'name must be a non-empty string of at most 200 characters');
  }
  if (!isPlan(input.plan)) {
    throw new SenderError('invalid_request', `plan must be one of: ${PLANS.join(', ')}`);
  }
  const now = clock.now();
  const { apiKey, key } = newApiKey(now);
  const account = await store.createAccount({
    id: newId('acct', now),
    name,
    plan: input.plan,
    apiKeyHash: key.hash,
    apiKeyId: key.id,
    apiKeyPrefix: key.prefix,
    now,
  });
  return { account, apiKey };
}

/** A fresh API key (shown once) and what the store keeps of it: an id, its first characters, its hash. */
export function newApiKey(now: number): { apiKey: string; key: NewApiKey } {
  const apiKey = API_KEY_PREFIX + randomBytes(32).toString('base64url');
  return {
    apiKey,
    key: {
      id: newId('key', now),
      prefix: apiKey.slice(0, API_KEY_SHOWN_CHARACTERS),
      hash: hashApiKey(apiKey),
    },
  };
}

/** The account an API key belongs to, or null. The lookup is by hash, so it leaks no timing of the key. */
export async function authenticateApiKey(
  store: Pick<Catalogue, 'findAccountByApiKeyHash'>,
  apiKey: string,
  now: number = Date.now(),
): Promise<AccountRecord | null> {
  if (!apiKey.startsWith(API_KEY_PREFIX) || apiKey.length > 200) return null;
  return store.findAccountByApiKeyHash(hashApiKey(apiKey), now);
}

/**
 * The working key an API key is, with its account, or null; notes its use (to the minute).
 *
 * @example
 * const holder = await findKeyHolder(store, 'lhk_…', Date.now());
 */
export async function findKeyHolder(
  store: Pick<Catalogue, 'findApiKey' | 'touchApiKey'>,
  apiKey: string,
  now: number,
): Promise<KeyHolder | null> {
  if (!apiKey.startsWith(API_KEY_PREFIX) || apiKey.length > 200) return null;
  const holder = await store.findApiKey(hashApiKey(apiKey), now);
  if (holder && (holder.key.lastUsedAt === null || holder.key.lastUsedAt <= now - 60_000)) {
    await store.touchApiKey(holder.key.id, now);
  }
  return holder;
}

// One call, not a Hash object per request: crypto.hash (Node 20.12+).
const sha256 = (text: string) => hash('sha256', text, 'buffer');

/** Whether a presented token is the configured one. */
export type TokenMatcher = (presented: string) => boolean;

/**
 * A constant-time check of presented tokens against the configured one, whose hash is taken once
 * (every ingest request would otherwise hash the same token again).
 */
export function tokenMatcher(expected: string): TokenMatcher {
  const expectedHash = sha256(expected);
  // Hashing both first gives equal lengths, so timingSafeEqual never throws and length leaks nothing.
  return (presented) => timingSafeEqual(sha256(presented), expectedHash);
}
