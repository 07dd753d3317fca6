/**
 * The management API as an Express 5 router (design D19), so a platform can mount it
 * in its own app or run it through `linkhooks-sender serve`. Routes come from one table that also
 * generates the OpenAPI document; the handlers know nothing of Express.
 */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import { systemClock } from '../clock.js';
import type { Sender } from '../engine/sender.js';
import { SenderError } from '../errors.js';
import { createLimiter } from '../limits/limiter.js';
import { perMinute } from '../limits/token-bucket.js';
import { accountOf, checkCsrf, checkMetricsToken, checkServiceToken, hasBearer } from './auth.js';
import { errorResponse, invalidRequest } from './error-response.js';
import { createIngest } from './ingest.js';
import { buildOpenApiDocument } from './openapi.js';
import { frameAncestorsOf, publicUrlOf } from './origin-settings.js';
import {
  cameOverTls,
  rejectMalformedUrl,
  securityHeaders,
  type TransportOptions,
} from './response-headers.js';
import type { RouteSpec } from './route.js';
import { accountRoutes } from './routes/accounts.js';
import { deliveryRoutes } from './routes/deliveries.js';
import { endpointOperationRoutes } from './routes/endpoint-operations.js';
import { endpointStatsRoute } from './routes/endpoint-stats.js';
import { endpointRoutes } from './routes/endpoints.js';
import { ingestBatchRoute, ingestRoute } from './routes/ingest.js';
import { eventTypesRoute, metricsRoute, openApiRouteSpec } from './routes/platform.js';
import { portalSessionRoute } from './routes/portal-sessions.js';
import { sessionRoutes } from './routes/session.js';
import { errorSchema } from './schemas.js';
import { CSRF_HEADER, createSessionStore, type SessionStore, sessionIdOf } from './sessions.js';

export interface ManagementRouterOptions extends TransportOptions {
  sender: Sender;
  /** The platform's token for `POST /internal/v1/events`; without it that route answers 503. */
  serviceToken?: string;
  /** When set, `GET /metrics` needs it as a Bearer token; open otherwise. */
  metricsToken?: string;
  /** Where unexpected errors (500s) are logged; secrets and headers are never in them. */
  logger?: Pick<Logger, 'error'>;
  /** Dashboard sessions; one in-memory store per router by default. */
  sessions?: SessionStore;
  /**
   * Failed sign-ins (a wrong or missing API key, presented as a Bearer token or to the dashboard's
   * sign-in) one client address may make per minute; past it, its sign-ins answer 429 until the
   * allowance refills. Default 10.
   */
  signInFailuresPerMinute?: number;
  /**
   * Where browsers reach the service (an https origin), for the portal links it hands out (design
   * D54); by default the address the platform's request came to.
   */
  publicUrl?: string;
  /**
   * Origins that may frame the dashboard (design D55), each an https origin (http only for
   * localhost); none by default. With any, the session cookie is `SameSite=None; Partitioned` over TLS.
   */
  frameAncestors?: string | readonly string[];
}

/** Every route the router answers, in the order it matches them. */
export const API_ROUTES: readonly RouteSpec[] = [
  ...sessionRoutes,
  ...endpointRoutes,
  ...endpointOperationRoutes,
  endpointStatsRoute,
  ...deliveryRoutes,
  eventTypesRoute,
  ingestRoute,
  ingestBatchRoute,
  ...accountRoutes,
  portalSessionRoute,
  metricsRoute,
];

/** The largest body a route reads unless it says otherwise. */
const DEFAULT_BODY_BYTES = 256 * 1024;

let openApiDocument: Record<string, unknown> | undefined;

/** The OpenAPI 3.1 document of every route (`GET /v1/openapi.json`). */
export function openApi(): Record<string, unknown> {
  openApiDocument ??= buildOpenApiDocument([...API_ROUTES, openApiRouteSpec], errorSchema);
  return openApiDocument;
}

/** True when the request carried a body, whether or not a parser understood it. */
const hasBody = (req: Request) =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

function readBody(route: RouteSpec, req: Request): unknown {
  if (!route.body) return undefined;
  let raw: unknown = req.body;
  if (raw === undefined) {
    if (hasBody(req)) {
      throw new SenderError('invalid_request', 'send the body as JSON with "Content-Type: application/json"');
    }
    if (route.body.required) throw new SenderError('invalid_request', 'this route needs a JSON body');
    raw = {};
  }
  const parsed = route.body.schema.safeParse(raw);
  if (!parsed.success) throw invalidRequest('body', parsed.error);
  return parsed.data;
}

function readQuery(route: RouteSpec, req: Request): unknown {
  const query = { ...(req.query as Record<string, unknown>) };
  if (!route.query) return query;
  const parsed = route.query.safeParse(query);
  if (!parsed.success) throw invalidRequest('query', parsed.error);
  return parsed.data;
}

/** A request that tries an API key: a Bearer token, or the dashboard's sign-in. */
function presentsCredentials(route: RouteSpec | null, req: Request): boolean {
  if (hasBearer(req.headers.authorization)) return true;
  const signIn = route ? route.tag === 'Session' : req.path === '/v1/session';
  return signIn && req.method === 'POST';
}

const clientOf = (req: Request) => req.ip ?? req.socket.remoteAddress ?? 'unknown';

function tooManySignIns(retryAfterMs: number): SenderError {
  const wait = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new SenderError(
    'rate_limited',
    `too many failed sign-ins from this address; try again in ${wait} s`,
    {
      retryAfterSeconds: wait,
    },
  );
}

/**
 * @example
 * const app = express();
 * app.use(createManagementRouter({ sender, serviceToken: process.env.LINKHOOKS_SERVICE_TOKEN }));
 */
export function createManagementRouter(options: ManagementRouterOptions): Router {
  const { sender } = options;
  const sessions = options.sessions ?? createSessionStore();
  const publicUrl = options.publicUrl === undefined ? undefined : publicUrlOf(options.publicUrl);
  const embeddable = frameAncestorsOf(options.frameAncestors).length > 0;
  const signIns = createLimiter(perMinute(options.signInFailuresPerMinute ?? 10), systemClock);
  const router = express.Router();
  const ingest = createIngest(sender);
  const parsers = new Map<number, ReturnType<typeof express.json>>();
  const json = (limit = DEFAULT_BODY_BYTES) => {
    const parser = parsers.get(limit) ?? express.json({ limit });
    parsers.set(limit, parser);
    return parser;
  };

  // Every /v1 and /internal answer is no-store: most carry a secret, a session or an account's data.
  router.use(['/v1', '/internal'], securityHeaders(options, { noStore: true }), rejectMalformedUrl);
  router.use('/metrics', securityHeaders(options, { noStore: false }), rejectMalformedUrl);

  router.get(openApiRouteSpec.path, (_req, res) => {
    res.json(openApi());
  });

  const requestOf = (req: Request, sessionId: string | null) => {
    const secure = cameOverTls(req, options.trustProxy);
    const host = req.headers.host ?? `${req.socket.localAddress}:${req.socket.localPort}`;
    return {
      cookies: { secure, embeddable },
      sessionId,
      baseUrl: publicUrl ?? `${secure ? 'https' : 'http'}://${host}`,
    };
  };

  for (const route of API_ROUTES) {
    // Credentials are checked before the body is parsed: a stranger learns nothing from a 400.
    const authenticate = async (req: Request, res: Response, next: NextFunction) => {
      if (presentsCredentials(route, req)) {
        const allowed = signIns.peek(clientOf(req));
        if (!allowed.ok) throw tooManySignIns(allowed.retryAfterMs);
      }
      const sessionId = sessionIdOf(req.headers.cookie);
      res.locals.sessionId = sessionId;
      checkCsrf({
        method: req.method,
        authorization: req.headers.authorization,
        csrfHeader: req.headers[CSRF_HEADER],
        cookieOrSignIn: sessionId !== null || route.tag === 'Session',
      });
      if (route.auth === 'account') {
        res.locals.account = await accountOf(sender, {
          authorization: req.headers.authorization,
          sessionAccountId: sessionId ? sessions.accountOf(sessionId) : null,
          sessionKeyId: sessionId ? (sessions.keyOf?.(sessionId) ?? null) : null,
        });
      }
      if (route.auth === 'service') checkServiceToken(options.serviceToken, req.headers.authorization);
      if (route.auth === 'metrics') checkMetricsToken(options.metricsToken, req.headers.authorization);
      next();
    };
    const parse = route.body ? [json(route.body.limitBytes)] : [];
    router[route.method](route.path, authenticate, ...parse, async (req: Request, res: Response) => {
      const result = await route.handle({
        sender,
        sessions,
        ingest,
        request: requestOf(req, res.locals.sessionId),
        account: res.locals.account,
        params: req.params as Record<string, string>,
        body: readBody(route, req),
        query: readQuery(route, req),
      });
      res.status(result.status);
      for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
      if ('json' in result) res.json(result.json);
      else if ('text' in result) res.type(result.contentType).send(result.text);
      else res.end();
    });
  }

  // Unknown routes under the API's prefixes answer JSON, not Express's HTML page; other paths fall
  // through to the platform's own app.
  router.use(['/v1', '/internal'], (req) => {
    throw new SenderError('route_not_found', `no route ${req.method} ${req.originalUrl.split('?')[0]}`);
  });

  router.use((error: unknown, req: Request, res: Response, next: NextFunction) => {
    if (!req.path.startsWith('/v1') && !req.path.startsWith('/internal') && req.path !== '/metrics') {
      next(error);
      return;
    }
    const answer = errorResponse(error);
    if (answer.status === 401 && presentsCredentials(null, req)) signIns.take(clientOf(req));
    if (answer.status === 500) options.logger?.error({ err: error, route: req.path }, 'management API error');
    if (answer.retryAfterSeconds !== undefined)
      res.setHeader('retry-after', String(answer.retryAfterSeconds));
    res.status(answer.status).json(answer.body);
  });

  return router;
}
