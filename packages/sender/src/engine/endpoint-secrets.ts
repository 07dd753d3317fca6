/**
 * An endpoint's secrets as the engine hands them out and changes them: a rotation's grace checked
 * and turned into the previous secret's expiry (design D38), the Standard Webhooks switch refused
 * for a secret of the earlier form (design D43), and the endpoint as it is at a given time, a
 * previous secret past its grace no longer in it.
 */
import { generateSecret, isStandardWebhooksSecret } from '@linkhooks/protocol';
import {
  DEFAULT_GRACE_SECONDS,
  MAX_GRACE_SECONDS,
  previousExpiresAfterRotation,
  previousSecretValid,
} from '../domain/secret-rotation.js';
import { SenderError } from '../errors.js';
import type { EndpointPatch } from '../store/port.js';
import type { EndpointRecord } from '../store/records.js';

export interface RotateOptions {
  /**
   * How long the replaced secret keeps signing, in whole seconds: 0 (at once) to 604800 (7 days).
   * Default 86400 (24 hours).
   */
  gracePeriodSeconds?: number;
}

/** The grace of a rotation, checked: a whole number of seconds from 0 to 7 days. */
export function checkGracePeriod(value: unknown): number {
  if (value === undefined) return DEFAULT_GRACE_SECONDS;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_GRACE_SECONDS) {
    throw new SenderError(
      'invalid_request',
      `grace_period_seconds must be a whole number of seconds from 0 (end the old secret at once) to ${MAX_GRACE_SECONDS} (7 days); the default is ${DEFAULT_GRACE_SECONDS} (24 hours)`,
    );
  }
  return value;
}

/** The store patch of a rotation at `now`: a fresh secret, the old one kept for the grace. */
export function rotationPatch(options: RotateOptions, now: number): EndpointPatch {
  const grace = checkGracePeriod(options.gracePeriodSeconds);
  return { secret: generateSecret(), previousSecretExpiresAt: previousExpiresAfterRotation(now, grace) };
}

/** The Standard Webhooks switch as asked, refused on a secret those libraries cannot decode (design D43). */
export function checkStandardWebhooks(value: unknown, secret: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') {
    throw new SenderError('invalid_endpoint', 'standard_webhooks must be true or false');
  }
  if (value && !isStandardWebhooksSecret(secret)) {
    throw new SenderError(
      'secret_rotation_required',
      "this endpoint's secret was made before Standard Webhooks support and those libraries cannot use it: rotate the secret (POST /v1/endpoints/{id}/secret/rotate, with a grace period so receivers keep working), then turn standard_webhooks on",
    );
  }
  return value;
}

/** The endpoint as it is at `now`: a previous secret whose grace has ended is no longer part of it. */
export function endpointAt(endpoint: EndpointRecord, now: number): EndpointRecord {
  if (previousSecretValid(endpoint, now)) return endpoint;
  if (endpoint.previousSecret === null && endpoint.previousSecretExpiresAt === null) return endpoint;
  return { ...endpoint, previousSecret: null, previousSecretExpiresAt: null };
}
