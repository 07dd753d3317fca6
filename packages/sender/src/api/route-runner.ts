/**
 * What a route's request goes through, whichever server carried it (the Express router, or the
 * direct ingest path of design D56): credentials before the body, so a stranger learns nothing
 * from a 400; the body's schema; the handler; and the error answer with its sign-in count. One
 * home, so that both answer alike.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { tokenMatcher } from '../accounts.js';
import { systemClock } from '../clock.js';
import { SenderError } from '../errors.js';
import { clientKey } from '../limits/client-key.js';
import { createLimiter } from '../limits/limiter.js';
import { rateLimited, retryAfterSeconds } from '../limits/rate-limited.js';
import { perMinute } from '../limits/token-bucket.js';
import type { AccountRecord } from '../store/records.js';
import { accountOf, checkCsrf, checkMetricsToken, checkServiceToken, hasBearer } from './auth.js';
import { errorResponse } from './error-response.js';
import { createIngest } from './ingest.js';
import { createIngestAdmission, defaultIngestBytesInFlight, overloadedCounter } from './ingest-admission.js';
import { frameAncestorsOf, publicUrlOf } from './origin-settings.js';
import { parseBody } from './parse-body.js';
import { cameOverTls } from './response-headers.js';
import { DEFAULT_BODY_BYTES, type RouteResult, type RouteSpec } from './route.js';
import type { ManagementRouterOptions } from './router.js';
import { CSRF_HEADER, createSessionStore, sessionIdOf } from './sessions.js';

/** The parts of a request the routes read, whichever server parsed it. */
export interface RouteRequest {
  method: string;
  /** The path without its query string. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The client's address, as the sign-in limit counts it (design D28). */
  client: string;
  /** It came over TLS, or through the TLS proxy the service trusts. */
  secure: boolean;
  /** Where the request came to: its Host header, else the local address. */
  host: string;
}

/**
 * The request as the routes read it. `client`: the address the sign-in limit counts, which each
 * server finds its own way (Express from the app's `trust proxy`).
 */
export function routeRequestOf(
  req: IncomingMessage & { secure?: boolean },
  path: string,
  client: string,
  trustProxy: boolean | undefined,
): RouteRequest {
  return {
    method: req.method ?? 'GET',
    path,
    headers: req.headers,
    client,
    secure: cameOverTls(req, trustProxy),
    host: req.headers.host ?? `${req.socket.localAddress}:${req.socket.localPort}`,
  };
}

/** An error's answer: status, body, and the headers it needs (`Retry-After` for a limit). */
export interface ErrorAnswer {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

/** Who a request turned out to be, once its credentials were checked. */
export interface Admitted {
  sessionId: string | null;
  account?: AccountRecord;
  /**
   * Gives back what the request holds of the ingest budget: called by whoever ran the request
   * once its work is over (answered, refused or abandoned), however it ended. Calling it again
   * does nothing.
   */
  release(): void;
}

const nothingHeld = () => undefined;

export interface RouteInput {
  params: Record<string, string>;
  body: unknown;
  query: unknown;
}

export type RouteRunner = ReturnType<typeof createRouteRunner>;

/** A request that tries a credential: a Bearer token, or the dashboard's sign-in. */
function presentsCredentials(route: RouteSpec | null, req: RouteRequest): boolean {
  if (hasBearer(req.headers.authorization)) return true;
  const signIn = route ? route.tag === 'Session' : req.path === '/v1/session';
  return signIn && req.method === 'POST';
}

/**
 * The allowance of failed sign-ins a request counts against, with its client's address: one per
 * kind of credential (design D26). A customer's script failing with its API key, from an address
 * the platform's ingest shares (a proxy, a NAT), then never refuses the service token, nor the
 * metrics token a scraper presents.
 */
function signInKey(req: RouteRequest): string {
  const kind = req.path.startsWith('/internal/')
    ? 'service'
    : req.path === '/metrics'
      ? 'metrics'
      : 'account';
  return `${kind} ${clientKey(req.client)}`;
}

/** The allowance of failed portal links from a client's address, apart from the other kinds. */
const portalKey = (client: string) => `portal ${clientKey(client)}`;

/**
 * The most of the body the route will hold: its declared length, or the route's limit when it
 * declares none or more (a body over the limit is refused before more of it is read).
 */
function declaredLength(req: RouteRequest, limit = DEFAULT_BODY_BYTES): number {
  const length = Number(req.headers['content-length']);
  return Number.isSafeInteger(length) && length >= 0 && req.headers['transfer-encoding'] === undefined
    ? Math.min(length, limit)
    : limit;
}

/** The management API requests an account may make per minute unless set (ManagementRouterOptions). */
const DEFAULT_API_REQUESTS_PER_MINUTE = 1_200;

/** The route's body checked against its schema; `raw` is what the JSON parser gave, if anything. */
export function checkBody(route: RouteSpec, raw: unknown, sentBody: boolean): unknown {
  if (!route.body) return undefined;
  if (raw === undefined) {
    if (sentBody) {
      throw new SenderError('invalid_request', 'send the body as JSON with "Content-Type: application/json"');
    }
    if (route.body.required) throw new SenderError('invalid_request', 'this route needs a JSON body');
    raw = {};
  }
  return parseBody(route.body, raw);
}

export function createRouteRunner(options: ManagementRouterOptions) {
  const { sender } = options;
  const sessions = options.sessions ?? createSessionStore();
  const publicUrl = options.publicUrl === undefined ? undefined : publicUrlOf(options.publicUrl);
  const embeddable = frameAncestorsOf(options.frameAncestors).length > 0;
  const signIns = createLimiter(perMinute(options.signInFailuresPerMinute ?? 10), systemClock);
  const apiRequests = createLimiter(
    perMinute(options.apiRequestsPerMinute ?? DEFAULT_API_REQUESTS_PER_MINUTE),
    systemClock,
  );
  const ingest = createIngest(sender);
  const admission = createIngestAdmission(
    options.ingestBytesInFlight ?? defaultIngestBytesInFlight(),
    overloadedCounter(sender.metrics),
  );
  const serviceToken = options.serviceToken ? tokenMatcher(options.serviceToken) : undefined;
  const metricsToken = options.metricsToken ? tokenMatcher(options.metricsToken) : undefined;

  return {
    /** Checks the request's credentials for the route; throws the SenderError it answers with. */
    async admit(route: RouteSpec, req: RouteRequest): Promise<Admitted> {
      // Only where a credential is checked: an open route (the metrics without a token, the
      // OpenAPI document) answers whatever the address failed elsewhere.
      const checks =
        route.auth === 'account' ||
        route.auth === 'service' ||
        route.tag === 'Session' ||
        (route.auth === 'metrics' && metricsToken !== undefined);
      if (checks && presentsCredentials(route, req)) {
        const allowed = signIns.peek(signInKey(req));
        if (!allowed.ok) throw rateLimited('failed sign-ins from this address', allowed.retryAfterMs);
      }
      const sessionId = sessionIdOf(req.headers.cookie);
      checkCsrf({
        method: req.method,
        authorization: req.headers.authorization,
        csrfHeader: req.headers[CSRF_HEADER],
        cookieOrSignIn: sessionId !== null || route.tag === 'Session',
      });
      const admitted: Admitted = { sessionId, release: nothingHeld };
      if (route.auth === 'account') {
        admitted.account = await accountOf(sender, {
          authorization: req.headers.authorization,
          sessionAccountId: sessionId ? sessions.accountOf(sessionId) : null,
          sessionKeyId: sessionId ? (sessions.keyOf?.(sessionId) ?? null) : null,
          sessionCookie: sessionId !== null,
        });
        const taken = apiRequests.take(admitted.account.id);
        if (!taken.ok) throw rateLimited('API requests for this account', taken.retryAfterMs);
      }
      if (route.auth === 'service') checkServiceToken(serviceToken, req.headers.authorization);
      // After the credentials: only the platform's own requests take the budget, and only they
      // learn how busy the service is. Held from before the body is read until the work is over.
      if (route.body?.ingest) admitted.release = admission.take(declaredLength(req, route.body.limitBytes));
      if (route.auth === 'metrics') checkMetricsToken(metricsToken, req.headers.authorization);
      return admitted;
    },

    /** Runs the route's handler for an admitted request whose body and query are checked. */
    run(route: RouteSpec, req: RouteRequest, admitted: Admitted, input: RouteInput): Promise<RouteResult> {
      return route.handle({
        sender,
        sessions,
        ingest,
        request: {
          cookies: { secure: req.secure, embeddable },
          sessionId: admitted.sessionId,
          baseUrl: publicUrl ?? `${req.secure ? 'https' : 'http'}://${req.host}`,
        },
        account: admitted.account as AccountRecord,
        ...input,
      });
    },

    /**
     * Portal links (design D54) are credentials too: a link that cannot sign in counts against its
     * client's failed sign-ins, an allowance of their own, and past it links from that address are
     * not looked up for a while (`wait`: the seconds until they are, or 0).
     */
    portalLinks: {
      wait(client: string): number {
        const allowed = signIns.peek(portalKey(client));
        return allowed.ok ? 0 : retryAfterSeconds(allowed.retryAfterMs);
      },
      failed(client: string): void {
        signIns.take(portalKey(client));
      },
    },

    /** The answer to an error; a refused credential counts against the client's sign-ins. */
    answer(error: unknown, req: RouteRequest): ErrorAnswer {
      const answer = errorResponse(error);
      if (answer.status === 401 && presentsCredentials(null, req)) signIns.take(signInKey(req));
      if (answer.logged) options.logger?.error({ err: error, route: req.path }, 'management API error');
      const headers: Record<string, string> =
        answer.retryAfterSeconds === undefined ? {} : { 'retry-after': String(answer.retryAfterSeconds) };
      return { status: answer.status, body: answer.body, headers };
    },
  };
}
