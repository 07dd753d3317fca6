/**
 * Who is calling: a Bearer API key names an account (design D19), or the dashboard's session cookie
 * does (design D22); webhooks need the Business plan or above (design R1); the ingest route takes
 * the platform's service token instead.
 */
import { planAllowsWebhooks, type TokenMatcher, WEBHOOK_PLANS } from '../accounts.js';
import type { Sender } from '../engine/sender.js';
import { SenderError } from '../errors.js';
import type { AccountRecord } from '../store/records.js';

function bearer(header: string | undefined): string | null {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
  return match ? match[1]! : null;
}

/** Whether the request presents a Bearer token, which then decides who it is (never the cookie). */
export const hasBearer = (authorization: string | undefined): boolean => bearer(authorization) !== null;

/** An API key no account holds, as a Bearer token or at the dashboard's sign-in. */
export const invalidApiKey = () =>
  new SenderError('unauthorized', 'the API key is not valid: check it, or make a new key for the account');

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A state change the cookie may sign in must carry the CSRF header (design D22): the browser sends
 * the cookie on its own, but not a custom header. Only a Bearer token takes the cookie's place, so
 * any other `Authorization` header changes nothing.
 */
export function checkCsrf(request: {
  method: string;
  authorization: string | undefined;
  csrfHeader: string | string[] | undefined;
  /** A session cookie came with it, or it is the sign-in, which sets one. */
  cookieOrSignIn: boolean;
}): void {
  if (!request.cookieOrSignIn || hasBearer(request.authorization) || SAFE_METHODS.has(request.method)) return;
  if (request.csrfHeader !== '1') {
    throw new SenderError(
      'csrf_check_failed',
      'send the header "X-Linkhooks-CSRF: 1" with the sign-in (POST /v1/session) and with every change made with the session cookie',
    );
  }
}

export interface Credentials {
  authorization: string | undefined;
  /** The dashboard session's account, when the request carries its cookie. */
  sessionAccountId?: string | null;
  /** The key the session signed in with: the session stands while the key works (design D37). */
  sessionKeyId?: string | null;
  /** A session cookie came with the request, whether or not it names a session. */
  sessionCookie?: boolean;
}

const SESSION_ENDED = 'the session has ended; sign in again';

/** The caller's account, or a SenderError: `unauthorized` (401) or `plan_required` (403). */
export async function accountOf(
  sender: Pick<Sender, 'authenticateKey' | 'getAccount' | 'authenticateSession'>,
  credentials: Credentials,
): Promise<AccountRecord> {
  const key = bearer(credentials.authorization);
  let account: AccountRecord | null;
  if (key) {
    account = (await sender.authenticateKey(key))?.account ?? null;
    if (!account) throw invalidApiKey();
  } else if (credentials.sessionAccountId) {
    account = credentials.sessionKeyId
      ? await sender.authenticateSession(credentials.sessionAccountId, credentials.sessionKeyId)
      : await sender.getAccount(credentials.sessionAccountId);
    if (!account) throw new SenderError('unauthorized', SESSION_ENDED);
  } else if (credentials.sessionCookie) {
    // A cookie this process does not know: it ended, or the service restarted since (sessions live in its memory, design D22).
    throw new SenderError('unauthorized', SESSION_ENDED);
  } else {
    throw new SenderError('unauthorized', 'send your API key as "Authorization: Bearer lhk_…"');
  }
  return checkPlan(account);
}

/**
 * Webhooks are offered on the Business plan and above (design R1). `naming`: how the answer names
 * the account; ingest, which publishes for every account, names it by its id. The name is made only
 * for a refusal: ingest checks every event.
 */
export function checkPlan(
  account: AccountRecord,
  naming: 'this account' | 'by id' = 'this account',
): AccountRecord {
  if (!planAllowsWebhooks(account.plan)) {
    const which = naming === 'by id' ? `account ${account.id}` : naming;
    throw new SenderError(
      'plan_required',
      `webhooks need the ${WEBHOOK_PLANS.join(' or ')} plan; ${which} is on ${account.plan}`,
      { details: { plan: account.plan, required: WEBHOOK_PLANS } },
    );
  }
  return account;
}

/** The bearer token must be the configured one (compared in constant time). */
function checkBearer(matches: TokenMatcher, authorization: string | undefined, what: string): void {
  const token = bearer(authorization);
  if (!token || !matches(token)) {
    throw new SenderError('unauthorized', `send the ${what} token as "Authorization: Bearer <token>"`);
  }
}

/** With a metrics token configured, the scrape must carry it. */
export function checkMetricsToken(
  matches: TokenMatcher | undefined,
  authorization: string | undefined,
): void {
  if (matches) checkBearer(matches, authorization, 'metrics');
}

/** The platform's service token; without one configured, ingest is off. */
export function checkServiceToken(
  matches: TokenMatcher | undefined,
  authorization: string | undefined,
): void {
  if (!matches) {
    throw new SenderError(
      'ingest_disabled',
      'the platform routes (/internal/…) are off until a service token is set: set LINKHOOKS_SERVICE_TOKEN on the service',
    );
  }
  checkBearer(matches, authorization, 'service');
}
