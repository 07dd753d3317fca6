import { generateSecret } from '@linkhooks/protocol';
import { describe, expect, it } from 'vitest';
import {
  previousExpiresAfterRotation,
  previousSecretExpiry,
  previousSecretValid,
  signingSecrets,
} from './secret-rotation.js';

const NOW = Date.UTC(2026, 10, 22, 9, 0, 0);
const current = generateSecret();
const previous = generateSecret();
const LEGACY = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYq';

describe('secret rotation (design D38, D39)', () => {
  it('signs X-Service-Signature with the previous secret until its expiry, then the new one', () => {
    const e = { secret: current, previousSecret: previous, previousSecretExpiresAt: NOW + 1000 };
    expect(signingSecrets(e, NOW)).toEqual({ serviceSignature: previous, standard: [current, previous] });
    expect(signingSecrets(e, NOW + 999).serviceSignature).toBe(previous);
    // At the expiry and after it, the previous secret is never used again.
    for (const t of [NOW + 1000, NOW + 1001, NOW + 10 ** 9]) {
      expect(signingSecrets(e, t)).toEqual({ serviceSignature: current, standard: [current] });
      expect(previousSecretValid(e, t)).toBe(false);
      expect(previousSecretExpiry(e, t)).toBeNull();
    }
    expect(previousSecretExpiry(e, NOW)).toBe(NOW + 1000);
  });

  it('uses the one secret when there is no previous one', () => {
    for (const e of [
      { secret: current, previousSecret: null, previousSecretExpiresAt: null },
      { secret: current, previousSecret: previous, previousSecretExpiresAt: null },
      { secret: current, previousSecret: null, previousSecretExpiresAt: NOW + 1000 },
    ]) {
      expect(signingSecrets(e, NOW)).toEqual({ serviceSignature: current, standard: [current] });
    }
  });

  it('leaves secrets of the earlier form out of webhook-signature, never out of X-Service-Signature', () => {
    const e = { secret: current, previousSecret: LEGACY, previousSecretExpiresAt: NOW + 1000 };
    expect(signingSecrets(e, NOW)).toEqual({ serviceSignature: LEGACY, standard: [current] });
    const old = { secret: LEGACY, previousSecret: null, previousSecretExpiresAt: null };
    expect(signingSecrets(old, NOW)).toEqual({ serviceSignature: LEGACY, standard: [] });
  });

  it('ends the grace at once for 0 seconds', () => {
    expect(previousExpiresAfterRotation(NOW, 0)).toBeNull();
    expect(previousExpiresAfterRotation(NOW, 86_400)).toBe(NOW + 86_400_000);
  });
});
