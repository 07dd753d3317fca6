/**
 * Random JSON at every route's body (and random query strings at the log): the API answers a 4xx
 * with the error shape, or a 2xx — never a 5xx (design D20: bad input is a 4xx, a 500 is a bug).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES } from '../../src/api/router.js';
import { type Api, SERVICE_TOKEN, startApi } from '../helpers/api-service.js';
import { createTestCertificates } from '../helpers/test-ca.mjs';

let api: Api;
let endpointId: string;
let deliveryId: string;

beforeAll(async () => {
  api = await startApi(createTestCertificates());
  const created = await api.call('POST', '/v1/endpoints', {
    body: { url: 'https://127.0.0.1:9/hooks/fuzz', events: ['click', 'link.deleted'] },
  });
  endpointId = created.json.id;
  const test = await api.call('POST', `/v1/endpoints/${endpointId}/test`);
  deliveryId = test.json.deliveries[0].id;
});
afterAll(() => api.close());

const bodyRoutes = API_ROUTES.filter((r) => r.body);

// Values shaped like the real fields half the time, so the fuzz reaches past the first check.
const field = fc.oneof(
  fc.jsonValue(),
  fc.constantFrom('click', 'link.deleted', 'https://127.0.0.1:9/x', 'http://127.0.0.1/', true, [], ['click']),
);
const body = fc.oneof(
  fc.jsonValue(),
  fc.record(
    {
      url: field,
      events: field,
      description: field,
      replay_skipped: field,
      event: field,
      account_id: field,
      data: field,
    },
    { requiredKeys: [] },
  ),
);

describe('random JSON at every body', () => {
  it.each(bodyRoutes.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r] as const))(
    '%s never answers 5xx',
    async (_label, route) => {
      const path = route.path.replace(':id', endpointId);
      const key = route.auth === 'service' ? SERVICE_TOKEN : api.alice.apiKey;
      await fc.assert(
        fc.asyncProperty(body, async (value) => {
          const res = await api.call(route.method.toUpperCase(), path, { key, raw: JSON.stringify(value) });
          expect(res.status, `${JSON.stringify(value)} → ${res.text}`).toBeLessThan(500);
          if (res.status >= 400) expect(typeof res.json.error.code).toBe('string');
        }),
        { numRuns: 60 },
      );
    },
  );

  it('random bytes as a body never answer 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 200 }), async (raw) => {
        const res = await api.call('POST', '/v1/endpoints', { raw });
        expect(res.status).toBeLessThan(500);
      }),
      { numRuns: 60 },
    );
  });

  it('random query strings on the delivery log never answer 5xx', async () => {
    const key = fc.constantFrom('status', 'event', 'cursor', 'limit', 'endpoint_id', 'x');
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(key, fc.string({ maxLength: 12 })), { maxLength: 4 }),
        async (pairs) => {
          const query = new URLSearchParams(pairs).toString();
          for (const path of [`/v1/endpoints/${endpointId}/deliveries`, '/v1/deliveries']) {
            const res = await api.call('GET', `${path}?${query}`);
            expect(res.status, `${path}?${query} → ${res.text}`).toBeLessThan(500);
          }
        },
      ),
      { numRuns: 60 },
    );
    expect((await api.call('GET', `/v1/deliveries/${deliveryId}`)).status).toBe(200);
  });
});
