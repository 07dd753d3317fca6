/** The platform's account routes' shapes (design D37): accounts and their API keys, never a key itself. */
import { z } from 'zod';
import type { ApiKey, RotatedKey } from '../engine/account-admin.js';
import { MAX_KEY_GRACE_SECONDS } from '../engine/account-admin.js';
import type { AccountRecord } from '../store/records.js';
import { pageCursor, pageLimit } from './page-cursor.js';

const isoTime = z.iso.datetime().describe('ISO 8601 UTC');
const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

export const accountSchema = z
  .object({ id: z.string(), name: z.string(), plan: z.string(), created_at: isoTime })
  .meta({ id: 'Account' });

export const accountPageSchema = z
  .object({ data: z.array(accountSchema), next_cursor: z.string().nullable() })
  .meta({ id: 'AccountPage' });

export const accountsQuery = z.strictObject({
  cursor: pageCursor('acct'),
  limit: pageLimit(1000, 100),
});

export const apiKeySchema = z
  .object({
    id: z.string(),
    prefix: z.string().nullable().describe('The key’s first characters, to recognise it'),
    status: z.enum(['active', 'expiring', 'expired', 'revoked']),
    created_at: isoTime,
    last_used_at: isoTime.nullable().describe('To the minute'),
    expires_at: isoTime.nullable().describe('When a rotated-out key stops working'),
    revoked_at: isoTime.nullable(),
  })
  .meta({ id: 'ApiKey' });

export const apiKeyListSchema = z.object({ data: z.array(apiKeySchema) }).meta({ id: 'ApiKeyList' });

export const rotateBody = z
  .strictObject({
    grace_seconds: z
      .number()
      .int('grace_seconds must be a whole number')
      .min(0, 'grace_seconds must be at least 0')
      .max(MAX_KEY_GRACE_SECONDS, `grace_seconds must be at most ${MAX_KEY_GRACE_SECONDS} (a day)`)
      .optional()
      .describe('How long the other keys keep working: 3600 by default, 0 ends them at once'),
  })
  .meta({ id: 'ApiKeyRotate' });

export const rotatedSchema = z
  .object({
    api_key: z.string().describe('The new key, shown this once'),
    key: apiKeySchema,
    previous: z.array(apiKeySchema).describe('The keys that worked before, with when they stop'),
  })
  .meta({ id: 'ApiKeyRotated' });

export const accountDeletedSchema = z
  .object({ id: z.string(), deleted: z.literal(true), removed: z.number().int() })
  .meta({ id: 'AccountDeleted' });

export function accountJson(a: AccountRecord) {
  return { id: a.id, name: a.name, plan: a.plan, created_at: iso(a.createdAt) };
}

export function apiKeyJson(k: ApiKey) {
  return {
    id: k.id,
    prefix: k.prefix,
    status: k.status,
    created_at: iso(k.createdAt),
    last_used_at: isoOrNull(k.lastUsedAt),
    expires_at: isoOrNull(k.expiresAt),
    revoked_at: isoOrNull(k.revokedAt),
  };
}

export function rotatedJson(r: RotatedKey) {
  return { api_key: r.apiKey, key: apiKeyJson(r.key), previous: r.previous.map(apiKeyJson) };
}
