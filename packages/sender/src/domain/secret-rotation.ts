/**
 * Rotation with a grace period (design D38, D39) as pure functions of (the endpoint's secrets,
 * now): which secrets are valid, which one signs X-Service-Signature, and which sign the
 * Standard Webhooks header. The previous secret is valid strictly before its expiry and never
 * after it.
 */
import { isStandardWebhooksSecret } from '@linkhooks/protocol';

/** 24 hours: the grace a rotation gives when none is asked for. */
export const DEFAULT_GRACE_SECONDS = 24 * 60 * 60;
/** 7 days: the longest grace a rotation may give. */
export const MAX_GRACE_SECONDS = 7 * 24 * 60 * 60;

export interface EndpointSecrets {
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: number | null;
}

/** Whether the previous secret still signs at `now`. */
export function previousSecretValid(e: EndpointSecrets, now: number): boolean {
  return e.previousSecret !== null && e.previousSecretExpiresAt !== null && now < e.previousSecretExpiresAt;
}

/** When the previous secret stops signing, or null when there is none valid at `now`. */
export function previousSecretExpiry(e: EndpointSecrets, now: number): number | null {
  return previousSecretValid(e, now) ? e.previousSecretExpiresAt : null;
}

export interface SigningSecrets {
  /**
   * The one key of X-Service-Signature: the previous secret while its grace lasts, then the new
   * one (design D39), so a receiver holding either the old secret or both is never refused.
   */
  serviceSignature: string;
  /**
   * The keys of `webhook-signature`, one entry each (design D32): the current secret, then the
   * previous one during its grace; only secrets of the Standard Webhooks form.
   */
  standard: string[];
}

/**
 * @example
 * const { serviceSignature, standard } = signingSecrets(endpoint, clock.now());
 */
export function signingSecrets(e: EndpointSecrets, now: number): SigningSecrets {
  const previous = previousSecretValid(e, now) ? (e.previousSecret as string) : null;
  const valid = previous === null ? [e.secret] : [e.secret, previous];
  return { serviceSignature: previous ?? e.secret, standard: valid.filter(isStandardWebhooksSecret) };
}

/**
 * When the previous secret of a rotation at `now` expires with a grace of `graceSeconds` (already
 * checked to be 0 to MAX_GRACE_SECONDS), or null for 0: the old secret is dropped at once.
 */
export function previousExpiresAfterRotation(now: number, graceSeconds: number): number | null {
  return graceSeconds === 0 ? null : now + graceSeconds * 1000;
}
