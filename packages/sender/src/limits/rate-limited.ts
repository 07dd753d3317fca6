/** A rate limit's refusal (design D26): what there were too many of, and when to try again. */
import { SenderError } from '../errors.js';

/** A wait as `Retry-After` says it: whole seconds, at least 1. */
export const retryAfterSeconds = (retryAfterMs: number) => Math.max(1, Math.ceil(retryAfterMs / 1000));

export function rateLimited(what: string, retryAfterMs: number): SenderError {
  const wait = retryAfterSeconds(retryAfterMs);
  return new SenderError('rate_limited', `too many ${what}; try again in ${wait} s`, {
    retryAfterSeconds: wait,
  });
}
