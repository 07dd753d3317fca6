/**
 * The management API as an Express 5 router (design D19), so a platform can mount it
 * in its own app or run it through `linkhooks-sender serve`. Routes come from one table that also
 * generates the OpenAPI document; the handlers know nothing of Express.
 */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import type { Sender } from '../engine/sender.js';
import { SenderError } from '../errors.js';
import { createDirectRoutes, type DirectRoutes } from './direct-routes.js';
import { invalidRequest } from './error-response.js';
import { buildOpenApiDocument } from './openapi.js';
import type { PortalLinkLimit } from './portal.js';
import { rejectMalformedUrl, securityHeaders, type TransportOptions } from './response-headers.js';
import { DEFAULT_BODY_BYTES, type RouteSpec } from './route.js';
import { routeMethods } from './route-methods.js';
import {
  type Admitted,
  checkBody,
  createRouteRunner,
  type RouteRequest,
  routeRequestOf,
} from './route-runner.js';
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
import type { SessionStore } from './sessions.js';

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
   * Requests one account may make per minute to the management API (with its API key or from the
   * dashboard, one allowance for both; ingest is the events' own limit); past it they answer 429
   * until the allowance refills, so one account's scripts cannot take the service's time from the
   * others. Default 1,200: the dashboard asks about 90 times a minute per open page.
   */
  apiRequestsPerMinute?: number;
  /**
   * Bytes of ingest request bodies the service holds at once (read, parsed, being stored); past
   * them an ingest request answers `503 overloaded` with `Retry-After: 1` before its body is read.
   * Default 256 MiB, or a sixteenth of the heap's limit where that is less.
   */
  ingestBytesInFlight?: number;
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

/** The routes the direct path may answer (design D56): the platform's ingest, at click-stream rates. */
const DIRECT_ROUTES: readonly RouteSpec[] = [ingestRoute, ingestBatchRoute];

let openApiDocument: Record<string, unknown> | undefined;

/** The OpenAPI 3.1 document of every route (`GET /v1/openapi.json`). */
export function openApi(): Record<string, unknown> {
  openApiDocument ??= buildOpenApiDocument([...API_ROUTES, openApiRouteSpec], errorSchema);
  return openApiDocument;
}

/** The paths the API answers for, known or not: the rest are the platform's own app's. */
const API_PATH = /^\/(v1|internal)(\/|$)|^\/metrics$/;

/** True when the request carried a body, whether or not a parser understood it. */
const hasBody = (req: Request) =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

function readQuery(route: RouteSpec, req: Request): unknown {
  const query = { ...(req.query as Record<string, unknown>) };
  if (!route.query) return query;
  const parsed = route.query.safeParse(query);
  if (!parsed.success) throw invalidRequest('query', parsed.error);
  return parsed.data;
}

/**
 * @example
 * const app = express();
 * app.use(createManagementRouter({ sender, serviceToken: process.env.LINKHOOKS_SERVICE_TOKEN }));
 */
export function createManagementRouter(options: ManagementRouterOptions): Router {
  return createManagementApi(options).router;
}

/**
 * The router, and the direct path that answers plain ingest requests before Express sees them
 * (design D56); both run their routes through one runner, so they share the sign-in limit and the
 * account cache. The service's listener puts the direct path first (`createServiceListener`).
 */
export function createManagementApi(options: ManagementRouterOptions): {
  router: Router;
  direct: DirectRoutes;
  /** The failed portal links' allowance, shared with the sign-ins' (the portal router's `limit`). */
  portalLinks: PortalLinkLimit;
} {
  const runner = createRouteRunner(options);
  const methodsAt = routeMethods([...API_ROUTES, openApiRouteSpec]);
  // Paths as written, to the letter and slash: Express's default also matched `/INTERNAL/v1/…` and
  // `/metrics/`, whose failed sign-ins then went uncounted (the answer path compares as written).
  const router = express.Router({ caseSensitive: true, strict: true });
  const parsers = new Map<number, ReturnType<typeof express.json>>();
  const json = (limit = DEFAULT_BODY_BYTES) => {
    const parser = parsers.get(limit) ?? express.json({ limit });
    parsers.set(limit, parser);
    return parser;
  };
  const requestOf = (req: Request): RouteRequest =>
    routeRequestOf(req, req.path, req.ip ?? req.socket.remoteAddress ?? 'unknown', options.trustProxy);

  // Every /v1 and /internal answer is no-store: most carry a secret, a session or an account's data.
  router.use(['/v1', '/internal'], securityHeaders(options, { noStore: true }), rejectMalformedUrl);
  router.use('/metrics', securityHeaders(options, { noStore: false }), rejectMalformedUrl);

  router.get(openApiRouteSpec.path, (_req, res) => {
    res.json(openApi());
  });

  for (const route of API_ROUTES) {
    const authenticate = async (req: Request, res: Response, next: NextFunction) => {
      res.locals.admitted = await runner.admit(route, requestOf(req));
      next();
    };
    const parse = route.body ? [json(route.body.limitBytes)] : [];
    router[route.method](route.path, authenticate, ...parse, async (req: Request, res: Response) => {
      try {
        const result = await runner.run(route, requestOf(req), res.locals.admitted, {
          params: req.params as Record<string, string>,
          body: checkBody(route, req.body, hasBody(req)),
          query: readQuery(route, req),
        });
        res.status(result.status);
        for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
        if ('json' in result) res.json(result.json);
        else if ('text' in result) res.type(result.contentType).send(result.text);
        else res.end();
      } finally {
        (res.locals.admitted as Admitted).release();
      }
    });
  }

  // Unknown routes under the API's prefixes answer JSON, not Express's HTML page; other paths fall
  // through to the platform's own app. A known path asked with another method says which it takes.
  router.use((req, res, next) => {
    if (!API_PATH.test(req.path)) return next();
    const path = req.originalUrl.split('?')[0] ?? '';
    const allowed = methodsAt(req.path);
    if (allowed.length === 0) throw new SenderError('route_not_found', `no route ${req.method} ${path}`);
    res.setHeader('allow', allowed.join(', '));
    if (req.method === 'OPTIONS') return void res.status(204).end();
    throw new SenderError(
      'method_not_allowed',
      `${path} takes ${new Intl.ListFormat('en', { type: 'disjunction' }).format(allowed.filter((m) => m !== 'HEAD'))}, not ${req.method}`,
    );
  });

  router.use((error: unknown, req: Request, res: Response, next: NextFunction) => {
    if (!req.path.startsWith('/v1') && !req.path.startsWith('/internal') && req.path !== '/metrics') {
      next(error);
      return;
    }
    // A body the parser refused, or a client gone mid-body: the request's work ends here.
    (res.locals.admitted as Admitted | undefined)?.release();
    const answer = runner.answer(error, requestOf(req));
    res.set(answer.headers).status(answer.status).json(answer.body);
  });

  return {
    router,
    portalLinks: runner.portalLinks,
    direct: createDirectRoutes(
      runner,
      options,
      DIRECT_ROUTES,
      DEFAULT_BODY_BYTES,
      options.sender.capabilities,
    ),
  };
}
