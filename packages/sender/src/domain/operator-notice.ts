/**
 * Operator notifications (design D50): what the platform is told about an endpoint's health, as
 * pure functions. The stores call `noticeOf` in the transaction that changes the endpoint, and
 * store the bytes it returns in their outbox; the notifier only signs and sends them.
 */
import { formatTimestamp } from '@linkhooks/protocol';
import { newId } from './ids.js';
import type { NoticeRules } from './notice-rules.js';
import type { DisabledReason, Transition, TransitionRules } from './transition.js';

export type NoticeType = 'endpoint.failing' | 'endpoint.disabled' | 'endpoint.enabled';

/**
 * The notice an attempt causes, from the endpoint's count before and after it: `endpoint.disabled`
 * when it disables, `endpoint.failing` when it takes an enabled endpoint's count to `failingAt`
 * (the count rises by one at a time and a delivered delivery resets it, so once per streak).
 */
export function noticeAfterAttempt(
  before: { enabled: boolean; consecutiveFailures: number },
  after: { consecutiveFailures: number; disable: boolean },
  rules: NoticeRules | undefined,
): 'endpoint.failing' | 'endpoint.disabled' | null {
  if (!rules) return null;
  if (after.disable) return 'endpoint.disabled';
  const reached =
    before.consecutiveFailures < rules.failingAt && after.consecutiveFailures >= rules.failingAt;
  return before.enabled && reached ? 'endpoint.failing' : null;
}

export interface NoticeInput {
  type: NoticeType;
  endpoint: { id: string; accountId: string; url: string; consecutiveFailures: number };
  rules: NoticeRules;
  now: number;
  /** With `endpoint.disabled`. */
  disabledReason?: DisabledReason | string | null;
}

/** A notice as the outbox stores it: its bytes never change, and every attempt signs them. */
export interface NewNotice {
  id: string;
  type: NoticeType;
  body: Uint8Array;
  createdAt: number;
}

/**
 * A URL's scheme and host: past a user and password (up to the last `@` before the path), and
 * before the path, query or fragment, a backslash (a path's separator in an https URL) or a `;`.
 */
const SCHEME_AND_HOST = /^([a-z][a-z0-9+.-]*:\/\/)(?:[^/?#\\]*@)?([^/?#\\@;]*)/i;

/**
 * The URL's origin; for a stored URL that no longer parses (one an older version kept, a database
 * edited by hand), its scheme and host as written, and never its path, query or credentials.
 * Thrown, it failed the record of the attempt that brought the notice, and that delivery was
 * claimed again at each lease's end, for good.
 */
function originOf(url: string): string {
  if (URL.canParse(url)) return new URL(url).origin;
  const found = SCHEME_AND_HOST.exec(url);
  return found ? `${found[1]}${found[2]}` : '';
}

/**
 * The notice's body. The endpoint's origin only (scheme, host, port), never its path or query,
 * where receivers keep tokens (design D46); no secret.
 *
 * @example
 * noticeOf({ type: 'endpoint.enabled', endpoint, rules, now }).body // {"type":"endpoint.enabled",…}
 */
export function noticeOf(input: NoticeInput): NewNotice {
  const id = newId('ntc', input.now);
  const body = {
    type: input.type,
    notice_id: id,
    occurred_at: formatTimestamp(input.now),
    account_id: input.endpoint.accountId,
    endpoint_id: input.endpoint.id,
    endpoint_origin: originOf(input.endpoint.url),
    consecutive_failures: input.endpoint.consecutiveFailures,
    disable_threshold: input.rules.threshold,
    ...(input.type === 'endpoint.disabled' ? { disabled_reason: input.disabledReason ?? null } : {}),
  };
  return { id, type: input.type, body: new TextEncoder().encode(JSON.stringify(body)), createdAt: input.now };
}

/**
 * The notice an attempt's transition causes, for the store to write with it, or null.
 *
 * @example const notice = attemptNotice(t, endpoint, rules, now); if (notice) insertNotice(db, notice);
 */
export function attemptNotice(
  t: Transition,
  endpoint: { id: string; accountId: string; url: string },
  rules: TransitionRules,
  now: number,
): NewNotice | null {
  if (!t.notice || !rules.notices) return null;
  return noticeOf({
    type: t.notice,
    endpoint: { ...endpoint, consecutiveFailures: t.endpoint.consecutiveFailures },
    rules: rules.notices,
    now,
    disabledReason: t.endpoint.disabledReason,
  });
}

/** The `endpoint.enabled` notice of an endpoint just re-enabled (its count is 0 again). */
export function enabledNotice(endpoint: NoticeInput['endpoint'], rules: NoticeRules, now: number): NewNotice {
  return noticeOf({ type: 'endpoint.enabled', endpoint, rules, now });
}
