/**
 * Accounts, plans and API keys for the management API (design D19). An API key is shown
 * once, at creation; the store keeps only its SHA-256. A key has 256 random bits, so a fast hash is
 * enough: nothing short of the key finds a preimage (the same reasoning as GitHub's token storage).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { type Clock, systemClock } from './clock.js';
import { newId } from './domain/ids.js';
import { SenderError } from './errors.js';
import type { Catalogue } from './store/port.js';
import { type AccountRecord, PLANS, type Plan } from './store/records.js';

export { PLANS, type Plan };

/** design R1: webhooks are offered on the Business plan and above. */
export const WEBHOOK_PLANS: readonly Plan[] = ['business', 'enterprise'];

export const API_KEY_PREFIX = 'lhk_';

export function planAllowsWebhooks(plan: Plan): boolean {
  return WEBHOOK_PLANS.includes(plan);
}

export function isPlan(value: unknown): value is Plan {
  return typeof value === 'string' && (PLANS as readonly string[]).includes(value);
}

export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex');
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
  const apiKey = API_KEY_PREFIX + randomBytes(32).toString('base64url');
  const now = clock.now();
  const account = await store.createAccount({
    id: newId('acct', now),
    name,
    plan: input.plan,
    apiKeyHash: hashApiKey(apiKey),
    now,
  });
  return { account, apiKey };
}

/** The account an API key belongs to, or null. The lookup is by hash, so it leaks no timing of the key. */
export async function authenticateApiKey(
  store: Pick<Catalogue, 'findAccountByApiKeyHash'>,
  apiKey: string,
): Promise<AccountRecord | null> {
  if (!apiKey.startsWith(API_KEY_PREFIX) || apiKey.length > 200) return null;
  return store.findAccountByApiKeyHash(hashApiKey(apiKey));
}

/** Constant-time comparison of a presented service token with the configured one. */
export function serviceTokenMatches(presented: string, expected: string): boolean {
  // Hashing both first gives equal lengths, so timingSafeEqual never throws and length leaks nothing.
  return timingSafeEqual(
    createHash('sha256').update(presented).digest(),
    createHash('sha256').update(expected).digest(),
  );
}
