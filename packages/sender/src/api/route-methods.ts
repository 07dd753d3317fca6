/**
 * Which methods the API takes at a path, from its route table: a request with another method at a
 * known path is answered 405 with `Allow`, not a 404 that says the path does not exist (a client
 * sending PUT where the API takes PATCH learnt nothing from "no route").
 */
import type { RouteSpec } from './route.js';

/** A route's path as a pattern: `:name` is one segment; the rest is taken to the letter. */
const patternOf = (path: string) =>
  new RegExp(
    `^${path
      .split('/')
      .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/')}$`,
  );

const ORDER = ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'];

/** The methods each path of `routes` takes, HEAD with GET (Express answers it so). */
export function routeMethods(routes: readonly Pick<RouteSpec, 'method' | 'path'>[]) {
  const patterns = routes.map((r) => ({ pattern: patternOf(r.path), method: r.method.toUpperCase() }));
  /** In one order whatever the table's: GET, HEAD, POST, PATCH, DELETE. */
  return (path: string): string[] => {
    const methods = new Set<string>();
    for (const { pattern, method } of patterns) {
      if (!pattern.test(path)) continue;
      methods.add(method);
      if (method === 'GET') methods.add('HEAD');
    }
    return ORDER.filter((m) => methods.has(m));
  };
}
