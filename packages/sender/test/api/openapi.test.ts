/**
 * The OpenAPI document: valid OpenAPI 3.1 by an independent validator, and in step with the
 * router — every route the router answers is described, and every described route exists.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { openApiPath } from '../../src/api/openapi.js';
import { createManagementRouter, openApi } from '../../src/api/router.js';
import { createSender } from '../../src/engine/sender.js';
import { createMemoryStore } from '../../src/store/memory-store.js';

type Layer = { route?: { path: string; methods: Record<string, boolean> } };

/** The method + path pairs the real router object answers, read from Express's own stack. */
function routerRoutes(): string[] {
  const router = createManagementRouter({ sender: createSender({ store: createMemoryStore() }) });
  const stack = (router as unknown as { stack: Layer[] }).stack;
  return stack.flatMap((layer) =>
    layer.route
      ? Object.keys(layer.route.methods)
          .filter((m) => m !== '_all')
          .map((m) => `${m} ${openApiPath(layer.route!.path)}`)
      : [],
  );
}

function documentedRoutes(): string[] {
  const paths = openApi().paths as Record<string, Record<string, unknown>>;
  return Object.entries(paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`));
}

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1', async () => {
    const validator = new Validator();
    const result = await validator.validate(openApi());
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('describes every route the router answers, and nothing else', () => {
    const answered = routerRoutes().sort();
    expect(answered.length).toBeGreaterThanOrEqual(17);
    expect(documentedRoutes().sort()).toEqual(answered);
  });

  it('names every route of design D19', () => {
    const documented = documentedRoutes();
    for (const route of [
      'post /v1/endpoints',
      'get /v1/endpoints',
      'get /v1/endpoints/{id}',
      'patch /v1/endpoints/{id}',
      'delete /v1/endpoints/{id}',
      'get /v1/endpoints/{id}/secret',
      'post /v1/endpoints/{id}/secret/rotate',
      'post /v1/endpoints/{id}/enable',
      'post /v1/endpoints/{id}/test',
      'get /v1/endpoints/{id}/deliveries',
      'get /v1/deliveries/{id}',
      'post /v1/deliveries/{id}/retry',
      'get /v1/event-types',
      'get /v1/openapi.json',
      'post /internal/v1/events',
      'get /metrics',
    ]) {
      expect(documented).toContain(route);
    }
  });

  it('is generated from the zod schemas: request bodies and responses carry their fields', () => {
    const doc = openApi() as {
      components: { schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }> };
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
    };
    const { schemas } = doc.components;
    expect(schemas.EndpointCreate?.required).toEqual(['url', 'events']);
    expect(Object.keys(schemas.Endpoint?.properties ?? {})).toEqual(
      expect.arrayContaining(['enabled', 'consecutive_failures', 'disabled_reason', 'disabled_at']),
    );
    expect(schemas.EndpointWithSecret?.required).toContain('secret');
    const log = doc.paths['/v1/endpoints/{id}/deliveries']!.get!.parameters;
    expect(log?.map((p) => `${p.in}:${p.name}`)).toEqual([
      'path:id',
      'query:status',
      'query:event',
      'query:q',
      'query:cursor',
      'query:limit',
    ]);
    // A page's size is a number to a generated client, as the API reads it.
    const limits = Object.values(doc.paths).flatMap((byMethod) =>
      Object.values(byMethod).flatMap((op) => (op.parameters ?? []).filter((p) => p.name === 'limit')),
    );
    expect(limits.length).toBeGreaterThanOrEqual(3);
    for (const limit of limits) {
      expect(limit).toMatchObject({ in: 'query', schema: { type: 'integer', minimum: 1 } });
      expect(limit).not.toHaveProperty('schema.pattern');
    }
  });

  it('declares the answers every route of a kind may give: 413 to a body, 403 to a change by cookie, 429 to sign-ins', () => {
    type Op = {
      requestBody?: unknown;
      security?: unknown[];
      responses: Record<string, { description: string }>;
    };
    const paths = openApi().paths as Record<string, Record<string, Op>>;
    const ops = Object.entries(paths).flatMap(([path, byMethod]) =>
      Object.entries(byMethod).map(([method, op]) => ({ route: `${method} ${path}`, op })),
    );
    const said = (op: Op, status: string) => op.responses[status]?.description ?? '';
    const withBody = ops.filter(({ op }) => op.requestBody);
    expect(withBody.length).toBeGreaterThanOrEqual(11);
    for (const { route, op } of withBody) expect(said(op, '413'), route).toMatch(/payload_too_large/);
    const byCookie = ops.filter(
      ({ route, op }) =>
        !route.startsWith('get ') &&
        (route.includes(' /v1/session') || JSON.stringify(op.security).includes('session')),
    );
    expect(byCookie.map((o) => o.route)).toEqual(
      expect.arrayContaining(['post /v1/session', 'delete /v1/session']),
    );
    for (const { route, op } of byCookie) expect(said(op, '403'), route).toMatch(/X-Linkhooks-CSRF: 1/);
    for (const route of ['post /internal/v1/events', 'post /internal/v1/events/batch', 'get /metrics']) {
      const op = ops.find((o) => o.route === route)!.op;
      expect(said(op, '429'), route).toMatch(/failed too many sign-ins with an? (service|metrics) token/);
    }
    expect(said(ops.find((o) => o.route === 'get /v1/endpoints')!.op, '429')).toMatch(
      /sign-ins with an API key/,
    );
    expect(said(ops.find((o) => o.route === 'get /v1/openapi.json')!.op, '429')).toBe('');
    // Signing in and out need the header whether a cookie came or not; sign-in reads the database.
    const session = (method: string) => ops.find((o) => o.route === `${method} /v1/session`)!.op;
    for (const method of ['post', 'delete'])
      expect(said(session(method), '403')).toMatch(/with a session cookie or not/);
    expect(said(session('post'), '503')).toMatch(/store_unavailable/);
  });

  it('declares Retry-After on every answer that says to wait, the batch’s 202 among them', () => {
    type Op = { responses: Record<string, { headers?: Record<string, unknown> }> };
    const paths = openApi().paths as Record<string, Record<string, Op>>;
    let declared = 0;
    for (const [path, byMethod] of Object.entries(paths))
      for (const [method, op] of Object.entries(byMethod))
        for (const status of ['429', '503']) {
          if (!op.responses[status]) continue;
          expect(op.responses[status].headers, `${method} ${path} ${status}`).toHaveProperty('Retry-After');
          declared++;
        }
    expect(declared).toBeGreaterThanOrEqual(30);
    expect(paths['/internal/v1/events/batch']!.post!.responses['202']!.headers).toHaveProperty('Retry-After');
    expect(paths['/internal/v1/events']!.post!.responses['202']!.headers).toBeUndefined();
  });

  it('is served at /v1/openapi.json without credentials', async () => {
    const app = express();
    app.use(createManagementRouter({ sender: createSender({ store: createMemoryStore() }) }));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    const res = await fetch(`http://127.0.0.1:${port}/v1/openapi.json`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(JSON.parse(JSON.stringify(openApi())));
    await new Promise((resolve) => server.close(resolve));
  });
});
