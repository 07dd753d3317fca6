/**
 * @module
 * `@linkhooks/sender/api`: the management API as an Express 5 router, and its OpenAPI document.
 * Only this entry imports Express; the engine stays free of it.
 */

export { type ErrorResponse, errorResponse } from './error-response.js';
export { openApiPath } from './openapi.js';
export { frameAncestorsOf, publicUrlOf } from './origin-settings.js';
export { PORTAL_PATH, portalLink } from './portal.js';
export type { RouteSpec } from './route.js';
export { API_ROUTES, createManagementRouter, type ManagementRouterOptions, openApi } from './router.js';
export { createServiceApp, createServiceListener, type ServiceOptions } from './service-app.js';
export { createServiceServer, SERVER_LIMITS, type ServerLimits } from './service-server.js';
export { CSRF_HEADER, createSessionStore, SESSION_COOKIE, type SessionStore } from './sessions.js';
