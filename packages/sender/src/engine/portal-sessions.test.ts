import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { isSenderError } from '../errors.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { AccountRecord } from '../store/records.js';
import { decidePortalLink, MAX_PORTAL_TTL_SECONDS } from './portal-sessions.js';
import { createSender } from './sender.js';

const account = { id: 'acct_1', name: 'A', plan: 'business', createdAt: 0 } as AccountRecord;

describe('decidePortalLink (design D54)', () => {
  it('signs in a link taken before its time, for an account that is there', () => {
    expect(decidePortalLink({ accountId: 'acct_1', expiresAt: 1_001 }, account, 1_000)).toEqual({
      ok: true,
      account,
    });
  });

  it('refuses one unknown or used, one at or past its time, one whose account is gone', () => {
    expect(decidePortalLink(null, account, 0)).toEqual({ ok: false, reason: 'not_valid' });
    expect(decidePortalLink({ accountId: 'acct_1', expiresAt: 1_000 }, account, 1_000)).toEqual({
      ok: false,
      reason: 'expired',
    });
    expect(decidePortalLink({ accountId: 'acct_1', expiresAt: 2_000 }, null, 1_000)).toEqual({
      ok: false,
      reason: 'account_gone',
    });
  });
});

describe('sender.createPortalSession and openPortalSession', () => {
  it('makes a link from the library that opens once', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const sender = createSender({ store: createMemoryStore(), clock });
    const { account } = await sender.createAccount({ name: 'Lib Co', plan: 'business' });
    const link = await sender.createPortalSession(account.id, { ttlSeconds: 120 });
    expect(link.token).toMatch(/^lhp_[\w-]{43}$/);
    expect(link.expiresAt).toBe(clock.now() + 120_000);
    expect(await sender.openPortalSession(link.token)).toMatchObject({
      ok: true,
      account: { id: account.id },
    });
    expect(await sender.openPortalSession(link.token)).toEqual({ ok: false, reason: 'not_valid' });
    expect(await sender.openPortalSession('not-a-token')).toEqual({ ok: false, reason: 'not_valid' });
    for (const ttlSeconds of [0, MAX_PORTAL_TTL_SECONDS + 1, 2.5]) {
      const error = await sender.createPortalSession(account.id, { ttlSeconds }).catch((e: unknown) => e);
      expect(isSenderError(error) && error.code).toBe('invalid_request');
    }
    const missing = await sender.createPortalSession('acct_missing').catch((e: unknown) => e);
    expect(isSenderError(missing) && missing.code).toBe('not_found');
    await sender.stop(0);
  });
});
