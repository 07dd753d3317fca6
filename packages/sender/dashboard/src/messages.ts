/**
 * Every message the dashboard shows for an error, in plain words (design D49): the API's error
 * codes, and the failure of an attempt by its kind and the network code behind it. The service's
 * own messages are written for developers reading the API; these are for the person at the page.
 */
import type { FailureKind } from '../../src/domain/delivery-state.js';
import { REMAINING_COUNTED_AT_MOST } from '../../src/domain/recovery.js';
import type { SenderErrorCode } from '../../src/errors.js';
import type { Attempt } from './api.js';

/**
 * The refusals that say when to ask again (`Retry-After`), by what went before the wait: a refusal
 * for a second's turn and one for an hour's allowance are not told the same wait.
 */
const WAITED = {
  rate_limited: 'Too many requests in a short time.',
  quota_exceeded: 'Your account has used its allowance for now.',
  store_unavailable: 'The service cannot reach its database right now.',
  overloaded: 'The service is busy right now.',
} as const satisfies Partial<Record<SenderErrorCode, string>>;

export const API_ERROR_MESSAGES: Readonly<Record<SenderErrorCode, string>> = {
  invalid_event: 'This event is not in a form the service accepts.',
  invalid_endpoint: 'This endpoint cannot be saved: check its URL and that it listens to at least one event.',
  unsafe_url: 'This URL cannot receive webhooks: it must point to an address on the public internet.',
  not_found: 'This was not found. It may have been deleted, or belong to another account.',
  endpoint_disabled: 'This endpoint is disabled. Re-enable it first.',
  endpoint_paused: 'This endpoint is paused. Resume it first.',
  delivery_in_flight: 'An attempt of this delivery is being made right now. Try again in a moment.',
  invalid_option: 'The service is set up wrongly. Contact support.',
  invalid_request: 'Something in the form is not valid.',
  unauthorized: 'You are signed out, or this API key is not valid. Sign in again.',
  plan_required: 'Your plan does not include this.',
  route_not_found: 'This page or action does not exist.',
  method_not_allowed: 'This page or action does not exist.',
  payload_too_large: 'This is too large to send.',
  ingest_disabled: 'Publishing is switched off on this service.',
  csrf_check_failed: 'The page is out of date. Reload it and try again.',
  rate_limited: `${WAITED.rate_limited} Try again shortly.`,
  quota_exceeded: `${WAITED.quota_exceeded} Try again later.`,
  secret_rotation_required: 'Rotate this endpoint’s secret before doing this.',
  secret_not_encrypted: 'The service cannot read this endpoint’s secret. Contact support.',
  master_key_mismatch: 'The service cannot read this endpoint’s secret. Contact support.',
  master_key_missing: 'The service cannot read this endpoint’s secret. Contact support.',
  storage_failed: 'The service cannot save anything right now. Try again in a few minutes.',
  store_unavailable: `${WAITED.store_unavailable} Try again in a moment.`,
  overloaded: `${WAITED.overloaded} Try again in a moment.`,
  internal: 'Something went wrong on our side. Try again; if it keeps happening, contact support.',
};

/** The request fields a customer fills in, by the names the form gives them. */
const FIELDS: Record<string, string> = {
  url: 'the URL',
  events: 'the events (choose at least one)',
  description: 'the description',
  since: 'the start date',
  until: 'the end date',
  grace_period_seconds: 'the grace period',
  api_key: 'the API key',
  q: 'the search (an event id, click_id or conversion_id)',
};

/**
 * The causes one code has several of, by the words of the service's message: an http:// URL
 * (refused for its scheme whatever the service allows of private networks), an endpoint URL's other
 * faults, a recovery's dates.
 */
const CAUSES: ReadonlyArray<[SenderErrorCode, RegExp, string]> = [
  ['unsafe_url', /must use https/, 'This URL cannot receive webhooks: it must start with https://.'],
  [
    'unsafe_url',
    /^url host .* does not resolve/,
    'This URL’s domain name does not lead to an address on the public internet. Check its spelling.',
  ],
  [
    'invalid_endpoint',
    /^url host .* could not be looked up in time/,
    'This URL’s domain name could not be looked up in time. Try again in a moment.',
  ],
  [
    'invalid_endpoint',
    /^url must not have a #fragment/,
    'Remove the part of the URL from # on: it is never sent to your server.',
  ],
  [
    'invalid_request',
    /^since must not be in the future/,
    'The start date is in the future: choose one in the past.',
  ],
  ['invalid_request', /^since must be before until/, 'The start date must be before the end date.'],
];

/** The log filtered by an endpoint deleted since (a link kept from before): the filter's 404. */
export const FILTERED_ENDPOINT_GONE =
  'This endpoint no longer exists, nor do its deliveries. Choose “any” endpoint to see the rest of the log.';

/** A wait in words, rounded up to the unit that says it: 1 second, 40 seconds, 2 minutes, 1 hour. */
export function waitInWords(seconds: number): string {
  const [count, unit] =
    seconds < 60
      ? [Math.max(1, Math.ceil(seconds)), 'second']
      : seconds < 3600
        ? [Math.ceil(seconds / 60), 'minute']
        : [Math.ceil(seconds / 3600), 'hour'];
  return `${count} ${unit}${count === 1 ? '' : 's'}`;
}

/**
 * A plain message for an API error: its code's message, naming the field at fault when known.
 * `detail`: the service's own message, read where one code has more than one cause;
 * `retryAfterSeconds`: its `Retry-After`, told as the wait where the code says to come back.
 */
export function apiErrorMessage(
  code: string,
  details?: unknown,
  detail = '',
  retryAfterSeconds?: number,
): string {
  const cause = CAUSES.find(([of, pattern]) => of === code && pattern.test(detail));
  if (cause) return cause[2];
  const waited = (WAITED as Partial<Record<string, string>>)[code];
  if (waited && retryAfterSeconds !== undefined && retryAfterSeconds >= 0)
    return `${waited} Try again in ${waitInWords(retryAfterSeconds)}.`;
  const base = API_ERROR_MESSAGES[code as SenderErrorCode] ?? API_ERROR_MESSAGES.internal;
  if (code !== 'invalid_request' || !Array.isArray(details)) return base;
  const path = String((details[0] as { path?: unknown })?.path ?? '').split('.')[0] ?? '';
  const field = FIELDS[path];
  return field ? `Check ${field}.` : base;
}

export const FAILURE_MESSAGES: Readonly<Record<FailureKind, string>> = {
  timeout: 'Your server did not answer in time.',
  dns: 'Your server’s domain name does not lead to an address on the public internet.',
  connect: 'Your server could not be reached: the connection was refused or dropped.',
  tls: 'Your server’s HTTPS certificate was not accepted.',
  http_status: 'Your server answered with an error status.',
  blocked_address: 'Your URL points to a private network address, where webhooks are never sent.',
  response_too_large: 'Your server’s answer was too large to read.',
};

/** Network codes that say more than the kind does, as they appear in an attempt's error. */
const CODE_MESSAGES: ReadonlyArray<[RegExp, (seconds: string) => string]> = [
  [
    /UND_ERR_HEADERS_TIMEOUT/,
    (s) => `Your server accepted the connection but sent no response within ${s} seconds.`,
  ],
  [
    /UND_ERR_BODY_TIMEOUT/,
    (s) => `Your server started its answer but did not finish it within ${s} seconds.`,
  ],
  [
    /UND_ERR_CONNECT_TIMEOUT|ETIMEDOUT/,
    (s) => `No connection to your server could be made within ${s} seconds.`,
  ],
  [
    /ECONNREFUSED/,
    () => 'Your server refused the connection: nothing is listening on that address and port.',
  ],
  [/ECONNRESET|UND_ERR_SOCKET|EPIPE/, () => 'Your server closed the connection before answering.'],
  [/EAI_AGAIN|ETIMEOUT/, () => 'Your server’s domain name could not be looked up in time.'],
  [/CERT_HAS_EXPIRED/, () => 'Your server’s HTTPS certificate has expired.'],
  [
    /SELF_SIGNED|UNABLE_TO_GET_ISSUER|UNABLE_TO_VERIFY/,
    () => 'Your server’s HTTPS certificate is not signed by a trusted authority.',
  ],
  [
    /HOSTNAME_MISMATCH|ERR_TLS_CERT_ALTNAME_INVALID/,
    () => 'Your server’s HTTPS certificate is for another domain name.',
  ],
  [
    /ALERT_HANDSHAKE_FAILURE|NO_SHARED_CIPHER|UNSUPPORTED_PROTOCOL/,
    () =>
      'Your server ended the secure connection before it began: it must accept TLS 1.3, or TLS 1.2 without requiring DHE key exchange (ECDHE, which servers use today, is fine).',
  ],
];

/**
 * The time limit an error names, in seconds: the attempt's deadline as the service writes it
 * (`within 30000 ms`), or the connection's as the client does (`timeout: 10000ms`); else 30.
 */
const secondsIn = (message: string) => {
  const ms = /within (\d+) ms|timeout: (\d+) ?ms/.exec(message);
  const limit = ms?.[1] ?? ms?.[2];
  return limit ? String(Math.round(Number(limit) / 1000)) : '30';
};

/** A plain explanation of why an attempt failed, or null when it succeeded. */
export function attemptFailureMessage(
  attempt: Pick<Attempt, 'failure_kind' | 'status_code' | 'error_message'> &
    Partial<Pick<Attempt, 'next_attempt_at'>>,
): string | null {
  const kind = attempt.failure_kind as FailureKind | null;
  if (!kind) return null;
  if (kind === 'http_status') return statusMessage(attempt.status_code, attempt.next_attempt_at);
  const message = attempt.error_message ?? '';
  for (const [code, text] of CODE_MESSAGES) if (code.test(message)) return text(secondsIn(message));
  if (kind === 'timeout') return `Your server sent no answer within ${secondsIn(message)} seconds.`;
  return FAILURE_MESSAGES[kind] ?? FAILURE_MESSAGES.connect;
}

/**
 * `next`: when the attempt after this one is due, null when none is (unknown: undefined). A 410
 * disables the endpoint only where the service is set to (`--disable-on-gone`); elsewhere it is
 * retried as any failure, so the message says what the record shows, not what a setting might do.
 */
function statusMessage(status: number | null, next?: string | null): string {
  if (status === null) return FAILURE_MESSAGES.http_status;
  if (status === 410) {
    if (next === undefined) return 'Your server answered 410 Gone: it says this URL is gone for good.';
    return next === null
      ? 'Your server answered 410 Gone: no more attempts of this delivery are made.'
      : 'Your server answered 410 Gone: this delivery is tried again on the schedule, as after any failure.';
  }
  if (status === 401 || status === 403)
    return `Your server refused the request (${status}): check that it verifies signatures with this endpoint’s secret (while a rotation’s grace period lasts, X-Service-Signature is still signed with the previous one: keep both until it ends).`;
  if (status === 404) return 'Your server answered 404 Not Found: check the endpoint’s URL path.';
  if (status === 429) return 'Your server answered 429 Too Many Requests: it asked us to slow down.';
  if (status >= 500) return `Your server answered ${status}: it failed while handling the webhook.`;
  if (status >= 300 && status < 400)
    return `Your server answered with a redirect (${status}). Redirects are not followed: use the final URL.`;
  return `Your server answered ${status}; only a 2xx status counts as delivered.`;
}

/** What a recovery did, and what is left: counted up to REMAINING_COUNTED_AT_MOST, so "at least". */
export function recoveredNote({ recovered, remaining }: { recovered: number; remaining: number }): string {
  const count = (n: number) => n.toLocaleString('en-US');
  const done = `${count(recovered)} failed deliver${recovered === 1 ? 'y' : 'ies'} scheduled for one more attempt.`;
  if (remaining <= 0) return done;
  const left = remaining >= REMAINING_COUNTED_AT_MOST ? `At least ${count(remaining)}` : count(remaining);
  return `${done} ${left} more remain: recover again to continue.`;
}
