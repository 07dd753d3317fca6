/**
 * Inputs PostgreSQL's text cannot hold, on SQLite and on PostgreSQL alike: a NUL character in a
 * URL's id, filter or search, an endpoint's description or an account_id, answers 400 in words that say so,
 * never the 500 of a database error; a click_id or conversion_id the log cannot index (a NUL
 * character, or longer than a search can be) leaves the event stored and delivered as sent, with
 * the other items of its batch.
 */
import { sampleEventData } from '@linkhooks/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEARCH_KEY_MAX_CHARS } from '../../src/engine/event-input.js';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { type Api, SERVICE_TOKEN, startApi } from '../helpers/api-service.js';
import { addEndpoint } from '../helpers/endpoints.js';
import { type HttpsReceiver, startHttpsReceiver } from '../helpers/https-receiver.js';
import { pgSchemas } from '../helpers/pg-schemas.js';
import { PG_URL, requireService } from '../helpers/services.js';

const pgUp = await requireService('PostgreSQL', PG_URL);
const schemas = pgSchemas('lh_nul');

let receiver: HttpsReceiver;
beforeAll(async () => {
  receiver = await startHttpsReceiver();
});
afterAll(async () => {
  await receiver.close();
  await schemas.drop();
});

const backends: Array<[string, boolean, () => Promise<Api>]> = [
  ['SQLite', true, () => startApi(receiver.certs)],
  [
    'PostgreSQL',
    pgUp,
    () =>
      startApi(receiver.certs, {
        store: createPostgresStore({ connectionString: PG_URL, schema: schemas.fresh() }),
      }),
  ],
];

describe.each(backends)('NUL characters and unindexable ids on %s', (name, up, start) => {
  let api: Api;
  let endpointId: string;
  beforeAll(async () => {
    if (!up) return;
    api = await start();
    endpointId = (
      await addEndpoint(api.sender, receiver, { account: api.alice.account.id, route: `nul-${name}` })
    ).endpoint.id;
  });
  afterAll(async () => {
    if (up) await api.close();
  });

  it.runIf(up)('answers 400 for a NUL character in an id, a filter or a search', async () => {
    for (const path of [
      '/v1/endpoints/%00',
      '/v1/deliveries/dlv_%00',
      '/v1/deliveries?q=clk%00',
      '/v1/deliveries?endpoint_id=%00',
      `/v1/endpoints/${endpointId}/deliveries?q=a%00b`,
    ]) {
      const res = await api.call('GET', path);
      expect(res.status, path).toBe(400);
      expect(res.json.error).toEqual({
        code: 'invalid_request',
        message: 'the URL holds a NUL character (%00), which no id, filter or search can',
      });
    }
  });

  it.runIf(up)('answers 400 for a NUL character in a description, on create and on change', async () => {
    const created = await api.call('POST', '/v1/endpoints', {
      body: { url: 'https://127.0.0.1:4443/hook', events: ['click'], description: 'a\u0000b' },
    });
    expect(created.status).toBe(400);
    expect(created.json.error.message).toBe(
      'body.description: description must not contain a NUL character (\\u0000)',
    );
    const changed = await api.call('PATCH', `/v1/endpoints/${endpointId}`, {
      body: { description: '\u0000' },
    });
    expect(changed.status).toBe(400);
    expect(changed.json.error.message).toMatch(/^body\.description: .*NUL/);
    expect((await api.call('GET', `/v1/endpoints/${endpointId}`)).json.description).toBeNull();
  });

  it.runIf(up)(
    'answers 400 for a NUL character in an account_id, for a portal link and for ingest',
    async () => {
      const portal = await api.call('POST', '/internal/v1/portal-sessions', {
        key: SERVICE_TOKEN,
        body: { account_id: `${api.alice.account.id}\u0000` },
      });
      expect(portal.status).toBe(400);
      expect(portal.json.error.message).toBe(
        'body.account_id: account_id must not contain a NUL character (\\u0000)',
      );
      const ingest = await api.call('POST', '/internal/v1/events', {
        key: SERVICE_TOKEN,
        body: { account_id: 'acct_\u0000', event: 'click', data: sampleEventData('click') },
      });
      expect(ingest.status).toBe(400);
      expect(ingest.json.error.message).toMatch(/account_id must not contain a NUL character/);
    },
  );

  it.runIf(up)('stores and delivers events whose ids the log cannot index, single and batched', async () => {
    const long = `clk_${'x'.repeat(4000)}`;
    const data = (click_id: string) => ({ ...sampleEventData('click'), click_id });
    const single = await api.call('POST', '/internal/v1/events', {
      key: SERVICE_TOKEN,
      body: { account_id: api.alice.account.id, event: 'click', data: data('clk_\u0000_nul') },
    });
    expect(single.status).toBe(202);
    const batch = await api.call('POST', '/internal/v1/events/batch', {
      key: SERVICE_TOKEN,
      body: {
        events: [long, 'clk_plain', `cnv_${'y'.repeat(SEARCH_KEY_MAX_CHARS)}`].map((id, i) => ({
          account_id: api.alice.account.id,
          event: i === 2 ? 'conversion' : 'click',
          data: i === 2 ? { ...sampleEventData('conversion'), conversion_id: id } : data(id),
        })),
      },
    });
    expect(batch.status).toBe(202);
    expect(batch.json.results.map((r: { status: number }) => r.status)).toEqual([202, 202, 202]);
    // Each is delivered as sent, its id whole, NUL character included.
    const sent = single.json.deliveries[0].id;
    const detail = await api.call('GET', `/v1/deliveries/${sent}`);
    expect(JSON.parse(detail.json.request_body).data.click_id).toBe('clk_\u0000_nul');
    const longOne = await api.call('GET', `/v1/deliveries/${batch.json.results[0].deliveries[0].id}`);
    expect(JSON.parse(longOne.json.request_body).data.click_id).toBe(long);
    // An id a search can name stays a search key; the rest are not searchable.
    const found = await api.call('GET', '/v1/deliveries?q=clk_plain');
    expect(found.json.data.map((d: { event_id: string }) => d.event_id)).toEqual([
      batch.json.results[1].event_id,
    ]);
  });
});
