/**
 * The platform's ingest answered straight from node:http (design D56). At click-stream rates
 * Express's work per request (its router's layers, body-parser's stream plumbing, res.json's ETag)
 * cost more than the publish itself. Only the plain request is taken here: a POST to the route's
 * exact path with a JSON body of known length, no encoding and no charset but UTF-8. Anything else
 * goes on to the Express router, which answers it as it always did; both run the route through the
 * same runner, so credentials, limits, checks and error answers are the same.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LARGE_BODY_BYTES, parseBudgetFor, type TurnBudget } from '../turn-budget.js';
import { parseArrayMemberBody, WHOLE_BODY_MAX_BYTES } from './array-member-body.js';
import { notJson } from './error-response.js';
import { readBody } from './read-body.js';
import { clientAddressOf, securityHeaderList, type TransportOptions } from './response-headers.js';
import type { RouteResult, RouteSpec } from './route.js';
import { type Admitted, checkBody, type RouteRunner, routeRequestOf } from './route-runner.js';

/** Answers the request if it is one of its routes in plain form (true), or leaves it untouched (false). */
export type DirectRoutes = (req: IncomingMessage, res: ServerResponse) => boolean;

const JSON_TYPE = 'application/json; charset=utf-8';

/** The request's body length, when it is plain JSON the direct path may read; null otherwise. */
function plainJsonLength(req: IncomingMessage, limit: number): number | null {
  const { headers } = req;
  if (headers['transfer-encoding'] !== undefined) return null;
  const encoding = headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return null;
  const [type, ...params] = (headers['content-type'] ?? '').split(';').map((p) => p.trim().toLowerCase());
  if (type !== 'application/json') return null;
  if (params.some((p) => p !== '' && p !== 'charset=utf-8' && p !== 'charset="utf-8"')) return null;
  const length = Number(headers['content-length']);
  return Number.isInteger(length) && length > 0 && length <= limit ? length : null;
}

const SYNTAX_MARK = '#';

/**
 * The body as JSON, read as the router's parser reads it, messages included: a UTF-8 byte order
 * mark skipped, and only an object or an array taken (anything else is refused as JSON.parse
 * words an unexpected first character).
 */
function parseJson(bytes: Buffer): unknown {
  let text = bytes.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const first = /^[ \t\n\r]*([^ \t\n\r]|$)/.exec(text)?.[1] ?? '';
  if (first !== '{' && first !== '[') {
    const at = first === '' ? -1 : text.indexOf(first);
    try {
      JSON.parse(at === -1 ? '' : text.slice(0, at) + SYNTAX_MARK.repeat(text.length - at));
    } catch (error) {
      const message = (error as Error).message;
      throw notJson(
        text,
        message.replace(/#+/g, (mark) => text.slice(at, at + mark.length)),
      );
    }
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw notJson(text, (error as Error).message);
  }
}

/** The body as parseJson gives it; a large one of one array member, an item at a time (design D63). */
export function readJson(route: RouteSpec, bytes: Buffer): unknown {
  const member = route.body?.arrayMember;
  if (member === undefined || bytes.length <= WHOLE_BODY_MAX_BYTES) return parseJson(bytes);
  return parseArrayMemberBody(bytes, member.name, member.maxItems) ?? parseJson(bytes);
}

function send(res: ServerResponse, status: number, headers: Record<string, string>, body: string | null) {
  if (body !== null) {
    headers['content-type'] ??= JSON_TYPE;
    headers['content-length'] = String(Buffer.byteLength(body));
  }
  res.writeHead(status, headers);
  res.end(body ?? undefined);
}

export function createDirectRoutes(
  runner: RouteRunner,
  options: TransportOptions,
  routes: readonly RouteSpec[],
  /** The largest body a route reads unless it says otherwise. */
  defaultLimit: number,
  /** Where the store commits: how a large body's parse waits for the loop (turn-budget.ts's parseBudgetFor). */
  store: { recordsOverNetwork: boolean },
): DirectRoutes {
  const byPath = new Map(
    routes.map((r) => [
      r.path,
      { route: r, parse: parseBudgetFor(store, r.body?.arrayMember !== undefined) },
    ]),
  );

  async function answer(route: RouteSpec, parse: TurnBudget, req: IncomingMessage, res: ServerResponse) {
    const request = routeRequestOf(
      req,
      route.path,
      clientAddressOf(req, options.trustProxy),
      options.trustProxy,
    );
    const headers: Record<string, string> = Object.fromEntries(
      securityHeaderList(options, request.secure, { noStore: true }),
    );
    let admitted: Admitted | undefined;
    try {
      admitted = await runner.admit(route, request);
      const bytes = await readBody(req);
      // A large body is parsed in a turn's budget shared with other requests' (turn-budget.ts).
      const json =
        bytes.length > LARGE_BODY_BYTES ? await parse(() => readJson(route, bytes)) : readJson(route, bytes);
      const body = checkBody(route, json, true);
      const result: RouteResult = await runner.run(route, request, admitted, { params: {}, body, query: {} });
      Object.assign(headers, result.headers);
      if ('json' in result) send(res, result.status, headers, JSON.stringify(result.json));
      else if ('text' in result)
        send(res, result.status, { ...headers, 'content-type': result.contentType }, result.text);
      else send(res, result.status, headers, null);
    } catch (error) {
      const failed = runner.answer(error, request);
      if (!res.headersSent && !res.destroyed)
        send(res, failed.status, { ...headers, ...failed.headers }, JSON.stringify(failed.body));
    } finally {
      // The body and its events are garbage now, whether the client waited for the answer or not.
      admitted?.release();
    }
  }

  return (req, res) => {
    if (req.method !== 'POST') return false;
    const found = byPath.get(req.url ?? '');
    if (!found || plainJsonLength(req, found.route.body?.limitBytes ?? defaultLimit) === null) return false;
    // answer() answers every error itself; should writing that answer fail, the connection goes.
    answer(found.route, found.parse, req, res).catch(() => res.destroy());
    return true;
  };
}
