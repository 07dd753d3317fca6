/**
 * One route of the management API, as data: method, path, auth, request and response schemas and
 * a handler free of Express. The router and the OpenAPI document are both built from the same
 * table (design D19), so a route cannot exist undescribed or be described but missing.
 */
import type { z } from 'zod';
import type { Sender } from '../engine/sender.js';
import type { AccountRecord } from '../store/records.js';
import type { Ingest } from './ingest.js';
import type { BodySchema } from './parse-body.js';
import type { CookiePolicy, SessionStore } from './sessions.js';

export type Method = 'get' | 'post' | 'patch' | 'delete';

export interface RouteContext<Body, Query> {
  sender: Sender;
  /** Dashboard sessions (cookie sign-in). */
  sessions: SessionStore;
  /** Platform ingest: ingest bodies checked and turned into publishes. */
  ingest: Ingest;
  /**
   * What the session routes need of the request; `baseUrl`: where a browser reaches the service,
   * for the links it hands out (design D54).
   */
  request: { cookies: CookiePolicy; sessionId: string | null; baseUrl: string };
  /** Set for `auth: 'account'` routes: the caller's account, already checked for its plan. */
  account: AccountRecord;
  params: Record<string, string>;
  body: Body;
  query: Query;
}

export type RouteResult = (
  | { status: number; json: unknown }
  | { status: number; text: string; contentType: string }
  | { status: 204 }
) & { headers?: Record<string, string> };

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** Non-JSON bodies (Prometheus text). */
  contentType?: string;
}

/** The largest body a route reads unless it says otherwise (`body.limitBytes`). */
export const DEFAULT_BODY_BYTES = 256 * 1024;

export interface RouteSpec<Body = unknown, Query = unknown> {
  method: Method;
  /** Express form: `/v1/endpoints/:id`. */
  path: string;
  summary: string;
  tag: 'Session' | 'Endpoints' | 'Deliveries' | 'Event types' | 'Platform' | 'Accounts';
  /**
   * `account`: Bearer API key of a Business+ account; `service`: the platform's service token;
   * `metrics`: the metrics token when one is configured, open otherwise.
   */
  auth: 'account' | 'service' | 'metrics' | 'none';
  /**
   * `limitBytes`: the largest body the route reads (default 256 KiB); a larger one answers 413.
   * `plain`: the schema's plain check, for a hot route (api/parse-body.ts). `arrayMember`: the body
   * is an object of this one array member of at most `maxItems` items, and the direct path parses
   * a large one an item at a time (api/array-member-body.ts). `ingest`: the body counts against
   * the ingest the service holds at once (api/ingest-admission.ts).
   */
  body?: BodySchema<Body> & {
    required: boolean;
    limitBytes?: number;
    arrayMember?: { name: string; maxItems: number };
    ingest?: true;
  };
  query?: z.ZodType<Query>;
  responses: Record<number, ResponseSpec>;
  handle(ctx: RouteContext<Body, Query>): Promise<RouteResult>;
}

/** Keeps each route's body and query types tied to its schemas. */
export function defineRoute<Body = undefined, Query = undefined>(spec: RouteSpec<Body, Query>): RouteSpec {
  return spec as unknown as RouteSpec;
}
