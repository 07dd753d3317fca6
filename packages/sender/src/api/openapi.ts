/**
 * The OpenAPI 3.1 document of the management API, generated from the route table and its zod
 * schemas (design D19). Schemas with a meta `id`
 * become named components; everything else is inlined.
 */
import { z } from 'zod';
import { USER_AGENT } from '../engine/sender.js';
import { DEFAULT_BODY_BYTES, type RouteSpec } from './route.js';

type Json = Record<string, unknown>;
type Described = Pick<
  RouteSpec,
  'method' | 'path' | 'summary' | 'tag' | 'auth' | 'body' | 'query' | 'responses'
>;

/** `/v1/endpoints/:id` → `/v1/endpoints/{id}` */
export const openApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, '{$1}');

function collector() {
  const components: Record<string, Json> = {};
  const convert = (schema: z.ZodType, io: 'input' | 'output'): Json => {
    const converted = z.toJSONSchema(schema, {
      target: 'draft-2020-12',
      io,
      unrepresentable: 'any',
      // A number in a query string is sent as its digits: its schema gives the number (pageLimit).
      override: ({ jsonSchema }) => {
        if (jsonSchema.type === 'integer') delete jsonSchema.pattern;
      },
    }) as Json;
    const text = JSON.stringify(converted).replaceAll('"#/$defs/', '"#/components/schemas/');
    const { $schema: _ignored, $defs, ...rest } = JSON.parse(text) as Json & { $defs?: Record<string, Json> };
    Object.assign(components, $defs ?? {});
    return rest;
  };
  return { components, convert };
}

function queryParameters(schema: z.ZodType, convert: (s: z.ZodType, io: 'input') => Json): Json[] {
  const json = convert(schema, 'input') as { properties?: Record<string, Json>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: 'query',
    required: json.required?.includes(name) ?? false,
    schema: property,
    ...(typeof property.description === 'string' ? { description: property.description } : {}),
  }));
}

/** `Retry-After` as the API sends it: whole seconds. */
const RETRY_AFTER = {
  description:
    'Seconds to wait before sending the request again, where the answer says to wait: a limit, a database that cannot be reached, a busy service; on a batch, the longest wait any of its items was answered with',
  schema: { type: 'integer', minimum: 1 },
};

function operation(route: Described, convert: ReturnType<typeof collector>['convert']): Json {
  const params = [...route.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  const responses: Json = {};
  for (const [status, spec] of Object.entries(route.responses)) {
    const type = spec.contentType ?? 'application/json';
    responses[status] = {
      description: spec.description,
      ...(spec.schema || spec.contentType
        ? {
            content: {
              [type]: { schema: spec.schema ? convert(spec.schema, 'output') : { type: 'string' } },
            },
          }
        : {}),
    };
  }
  // What any route of its kind may answer, beside its own answer of that status if any.
  const also = (status: string, text: string) => {
    const own = responses[status] as { description: string } | undefined;
    responses[status] = own
      ? { ...own, description: `${own.description}; or ${text}` }
      : { description: text[0]!.toUpperCase() + text.slice(1), content: errorContent };
  };
  const signIn = route.tag === 'Session' && route.method === 'post';
  if (route.auth !== 'none' && route.auth !== 'metrics') {
    responses['401'] ??= { description: 'Missing or wrong credentials', content: errorContent };
  }
  // Sign-in reads the account's key from the database too.
  if (route.auth === 'account' || route.auth === 'service' || signIn) {
    also(
      '503',
      'the database cannot be reached right now (`store_unavailable`): send it again after `Retry-After`',
    );
  }
  if (route.auth === 'service') {
    also('503', 'no service token is set on the service (`ingest_disabled`)');
    if (route.body?.ingest) {
      also(
        '503',
        'the service holds as much ingest as it can at once (`overloaded`): send it again after `Retry-After`',
      );
      also(
        '503',
        'the service could not make the event durable on its disk (`storage_failed`), so it was not acknowledged: send it again with its `event_id` once the service has been restarted',
      );
    }
  }
  if (route.auth === 'account') {
    also(
      '429',
      'the account’s API requests this minute are spent (`rate_limited`): send it again after `Retry-After`',
    );
    responses['403'] ??= {
      description: 'The account’s plan has no webhooks',
      content: errorContent,
    };
  }
  // design D26: failed sign-ins per client address, apart for each kind of credential.
  if (route.auth !== 'none' || signIn) {
    const token =
      route.auth === 'service' ? 'service token' : route.auth === 'metrics' ? 'metrics token' : 'API key';
    also(
      '429',
      `this address (an IPv6 one by its /64) failed too many sign-ins with a${token === 'API key' ? 'n' : ''} ${token} this minute (\`rate_limited\`): send it again after \`Retry-After\``,
    );
  }
  if (route.tag === 'Session' && route.method !== 'get') {
    also(
      '403',
      `without an \`Authorization: Bearer\` key, it lacks the header \`X-Linkhooks-CSRF: 1\`, which signing in and out always need, with a session cookie or not (\`csrf_check_failed\`)`,
    );
  } else if (route.auth === 'account' && route.method !== 'get') {
    also(
      '403',
      `made with the session cookie, it lacks the header \`X-Linkhooks-CSRF: 1\` (\`csrf_check_failed\`)`,
    );
  }
  if (route.body) {
    const kib = (route.body.limitBytes ?? DEFAULT_BODY_BYTES) / 1024;
    also('413', `the body is larger than ${kib.toLocaleString('en-US')} KiB (\`payload_too_large\`)`);
  }
  // The answers that say when to send again say it in a header too, for clients made from this document.
  for (const status of ['429', '503', ...(route.body?.ingest && route.body.arrayMember ? ['202'] : [])]) {
    const answer = responses[status] as Json | undefined;
    if (answer) answer.headers = { 'Retry-After': RETRY_AFTER };
  }
  return {
    summary: route.summary,
    tags: [route.tag],
    operationId: `${route.method}${openApiPath(route.path).replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string) => (c ? c.toUpperCase() : ''))}`,
    ...(route.auth === 'account' ? { security: [{ apiKey: [] }, { session: [] }] } : {}),
    ...(route.auth === 'service' ? { security: [{ serviceToken: [] }] } : {}),
    ...(route.auth === 'metrics' ? { security: [{}, { metricsToken: [] }] } : {}),
    ...(route.auth === 'none' ? { security: [] } : {}),
    parameters: [...params, ...(route.query ? queryParameters(route.query, convert) : [])],
    ...(route.body
      ? {
          requestBody: {
            required: route.body.required,
            content: { 'application/json': { schema: convert(route.body.schema, 'input') } },
          },
        }
      : {}),
    responses,
  };
}

const errorContent = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };

/** Builds the document for the given routes. */
export function buildOpenApiDocument(routes: readonly Described[], errorSchema: z.ZodType): Json {
  const { components, convert } = collector();
  convert(errorSchema, 'output'); // registers the Error component the 401/403 answers point to
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    paths[path] = { ...paths[path], [route.method]: operation(route, convert) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'linkhooks management API',
      version: USER_AGENT.split('/')[1],
      description:
        'Webhook endpoints, their secrets and the delivery log of a linkhooks account. Errors are `{"error":{"code","message","details?"}}`.',
    },
    tags: [
      { name: 'Session' },
      { name: 'Endpoints' },
      { name: 'Deliveries' },
      { name: 'Event types' },
      { name: 'Platform' },
      {
        name: 'Accounts',
        description: 'The platform administers accounts and their API keys (service token)',
      },
    ],
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An account API key (lhk_…)' },
        serviceToken: { type: 'http', scheme: 'bearer', description: 'LINKHOOKS_SERVICE_TOKEN' },
        metricsToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'LINKHOOKS_METRICS_TOKEN, when the service has one; the route is open otherwise',
        },
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: 'linkhooks_session',
          description:
            'The dashboard session (POST /v1/session); requests that change state add X-Linkhooks-CSRF: 1',
        },
      },
    },
  };
}
