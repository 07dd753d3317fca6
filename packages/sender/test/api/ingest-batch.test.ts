/**
 * Batch ingest (`POST /internal/v1/events/batch`) over HTTP against the real service on a loopback
 * port: each item answers on its own and in its place, only the valid ones are stored, the limits
 * (1,000 events, 8 MiB) answer 413, the service token is checked before the body is read, and the
 * single ingest route keeps its own behaviour beside it.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts.js';
import { MAX_BATCH, MAX_BATCH_BYTES } from '../../src/api/routes/ingest.js';
import { MAX_DATA_DEPTH, MAX_EVENT_BODY_BYTES } from '../../src/engine/event-input.js';
import { type Api, type ApiResponse, SERVICE_TOKEN, startApi } from '../helpers/api-service.js';
import { createTestCertificates } from '../helpers/test-ca.mjs';

const BATCH = '/internal/v1/events/batch';
const SINGLE = '/internal/v1/events';

let api: Api;
let free: Awaited<ReturnType<typeof createAccount>>;
let n = 0;

beforeAll(async () => {
  // The sender is never started and never ticked: deliveries stay `pending` where they were stored.
  api = await startApi(createTestCertificates());
  free = await createAccount(api.store, { name: 'Free Co', plan: 'free' });
});
afterAll(async () => {
  await api.close();
});

/** A click whose click_id tells which item of a batch it came from. */
const click = (clickId = `clk_${n++}`) => ({
  click_id: clickId,
  link_id: 7,
  link_slug: 'summer',
  destination_url: 'https://shop.example.com/',
  ip: '203.0.113.9',
  country: 'DE',
  region: 'Berlin',
  city: 'Berlin',
  device: 'mobile',
  browser: 'Firefox',
  os: 'Linux',
  referer: 'https://news.example.org/',
  is_unique: true,
  fraud_flags: [],
});

const item = (accountId: string, clickId?: string) => ({
  account_id: accountId,
  event: 'click',
  data: click(clickId),
});

const batch = (events: unknown, options: { key?: string | null } = {}) =>
  api.call('POST', BATCH, { key: options.key === undefined ? SERVICE_TOKEN : options.key, body: { events } });

type ItemResult = { status: number; event_id?: string; error?: { code: string; message: string } };
/** A batch's items' results, its answer checked to be a 202. */
async function batchResults(events: unknown): Promise<ItemResult[]> {
  const res = await batch(events);
  expect(res.status).toBe(202);
  return res.json.results as ItemResult[];
}

let endpoints = 0;
/** An endpoint subscribed to clicks, created over the API with the account's key. */
async function clickEndpoint(apiKey: string): Promise<string> {
  const res = await api.call('POST', '/v1/endpoints', {
    key: apiKey,
    body: { url: `https://127.0.0.1:9/hooks/batch${endpoints++}`, events: ['click'] },
  });
  expect(res.status).toBe(201);
  return res.json.id as string;
}

/** Every delivery of an endpoint, through the API's paged delivery log. */
async function deliveriesOf(endpointId: string, apiKey: string) {
  const all: { id: string; event_id: string; status: string }[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `?limit=100&cursor=${cursor}` : '?limit=100';
    const page: ApiResponse = await api.call('GET', `/v1/endpoints/${endpointId}/deliveries${query}`, {
      key: apiKey,
    });
    expect(page.status).toBe(200);
    all.push(...page.json.data);
    cursor = page.json.next_cursor;
  } while (cursor);
  return all;
}

/** The click_id an event was stored with, read back through the engine. */
async function storedClickId(accountId: string, eventId: string): Promise<string> {
  const event = await api.sender.getEvent(accountId, eventId);
  return (JSON.parse(Buffer.from(event.body).toString('utf8')) as { data: { click_id: string } }).data
    .click_id;
}

describe('a batch mixing valid and invalid events', () => {
  it('stores exactly the valid ones and answers each item in its place', async () => {
    const aliceEp = await clickEndpoint(api.alice.apiKey);
    const bobEp = await clickEndpoint(api.bob.apiKey);
    // Endpoints of accounts without webhooks, made through the engine: if ingest published for
    // them, their deliveries would show here.
    const freeEp = await api.sender.createEndpoint(free.account.id, {
      url: 'https://127.0.0.1:9/hooks/free',
      events: ['click'],
    });
    const proEp = await api.sender.createEndpoint(api.pro.account.id, {
      url: 'https://127.0.0.1:9/hooks/pro',
      events: ['click'],
    });

    const alice = api.alice.account.id;
    const bob = api.bob.account.id;
    const events: unknown[] = [
      item(alice, 'mix-0'),
      { ...item(alice, 'mix-1'), data: { ...click('mix-1'), link_id: 'seven' } },
      item(bob, 'mix-2'),
      item('acct_nobody', 'mix-3'),
      item(free.account.id, 'mix-4'),
      'not an event',
      item(api.pro.account.id, 'mix-6'),
      { ...item(alice, 'mix-7'), timestamp: '2026-11-22T10:00:00Z' },
      { ...item(alice, 'mix-8'), extra: true },
      { ...item(alice, 'mix-9'), event: 'clicks' },
      null,
      item(bob, 'mix-11'),
      item(alice, 'mix-12'),
    ];
    const res = await batch(events);
    expect(res.status).toBe(202);
    const results = res.json.results as Array<Record<string, unknown> & { status: number }>;
    expect(results).toHaveLength(events.length);

    const expected: Array<[number, string | null]> = [
      [202, null],
      [400, 'invalid_event'],
      [202, null],
      [404, 'not_found'],
      [403, 'plan_required'],
      [400, 'invalid_request'],
      [403, 'plan_required'],
      [202, null],
      [400, 'invalid_request'],
      [400, 'invalid_request'],
      [400, 'invalid_request'],
      [202, null],
      [202, null],
    ];
    results.forEach((result, i) => {
      const [status, code] = expected[i]!;
      expect(result.status, `item ${i}`).toBe(status);
      if (code === null) {
        expect(result.event_id, `item ${i}`).toMatch(/^evt_/);
        expect(result).not.toHaveProperty('error');
      } else {
        expect(result.error, `item ${i}`).toMatchObject({ code, message: expect.any(String) });
        expect(result, `item ${i}`).not.toHaveProperty('event_id');
      }
    });
    const errorOf = (i: number) => results[i]!.error as { code: string; message: string };
    expect(errorOf(1).message).toMatch(/link_id/);
    expect(errorOf(3).message).toMatch(/acct_nobody/);
    // Ingest publishes for every account: the answer names the one refused, and the plans it needs.
    expect(errorOf(4).message).toBe(
      `webhooks need the business or enterprise plan; account ${free.account.id} is on free`,
    );
    expect(errorOf(6).message).toBe(
      `webhooks need the business or enterprise plan; account ${api.pro.account.id} is on pro`,
    );
    expect(errorOf(8).message).toMatch(/extra/);
    expect(errorOf(9).message).toMatch(/event/);

    // In order: the n-th result is the n-th item's event, for the account it named.
    const accountOf = (i: number) => (events[i] as { account_id: string }).account_id;
    const valid = [0, 2, 7, 11, 12];
    for (const i of valid) {
      expect(await storedClickId(accountOf(i), results[i]!.event_id as string), `item ${i}`).toBe(`mix-${i}`);
      const deliveries = results[i]!.deliveries as { endpoint_id: string; event_id: string }[];
      expect(deliveries.map((d) => d.endpoint_id)).toEqual([accountOf(i) === alice ? aliceEp : bobEp]);
      expect(deliveries[0]!.event_id).toBe(results[i]!.event_id);
    }
    const stamped = await api.sender.getEvent(alice, results[7]!.event_id as string);
    expect(JSON.parse(Buffer.from(stamped.body).toString('utf8')).timestamp).toBe('2026-11-22T10:00:00Z');

    // Stored: exactly the valid ones, one delivery each, on the right account's endpoint.
    const idsOf = (indices: number[]) => indices.map((i) => results[i]!.event_id as string).sort();
    const aliceLog = await deliveriesOf(aliceEp, api.alice.apiKey);
    expect(aliceLog.map((d) => d.event_id).sort()).toEqual(idsOf([0, 7, 12]));
    expect(aliceLog.every((d) => d.status === 'pending')).toBe(true);
    const bobLog = await deliveriesOf(bobEp, api.bob.apiKey);
    expect(bobLog.map((d) => d.event_id).sort()).toEqual(idsOf([2, 11]));
    for (const [account, endpointId] of [
      [free.account.id, freeEp.id],
      [api.pro.account.id, proEp.id],
    ] as const) {
      expect((await api.sender.listDeliveries(account, { endpointId, limit: 100 })).items).toEqual([]);
    }
    expect((await api.store.stats()).queued.pending).toBe(5);
  });

  it('keeps every valid item in its own place however the invalid ones fall', async () => {
    const endpoint = await clickEndpoint(api.alice.apiKey);
    const alice = api.alice.account.id;
    // Valid and invalid items interleaved irregularly, with runs of each.
    const isValid = (i: number) => (i * 7) % 5 < 2 || i % 11 === 0;
    const events = Array.from({ length: 120 }, (_, i) =>
      isValid(i) ? item(alice, `order-${i}`) : { ...item(alice, `order-${i}`), data: { click_id: 1 } },
    );
    const results = await batchResults(events);
    expect(results.map((r) => r.status)).toEqual(events.map((_, i) => (isValid(i) ? 202 : 400)));
    const validIndices = events.map((_, i) => i).filter(isValid);
    for (const i of validIndices) {
      expect(await storedClickId(alice, results[i]!.event_id!), `item ${i}`).toBe(`order-${i}`);
    }
    for (const [i, r] of results.entries()) if (!isValid(i)) expect(r.error?.code).toBe('invalid_event');
    const log = await deliveriesOf(endpoint, api.alice.apiKey);
    expect(log.map((d) => d.event_id).sort()).toEqual(validIndices.map((i) => results[i]!.event_id!).sort());
  });

  it('answers an item whose data nests too deep as its own 400, the rest stored, as on the single route', async () => {
    const alice = api.alice.account.id;
    // Tens of thousands of levels fit under the body limit: writing one out overflowed the stack
    // (here too, so the body is written by hand).
    const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
    const withExtra = (clickId: string, levels: number) =>
      `${JSON.stringify(item(alice, clickId)).slice(0, -2)},"extra":${nested(levels)}}}`;
    const deep = withExtra('too-deep', 40_000);
    const raw = `{"events":[${JSON.stringify(item(alice, 'before-deep'))},${deep},${withExtra('deep-enough', MAX_DATA_DEPTH - 1)}]}`;
    const res = await api.call('POST', BATCH, { key: SERVICE_TOKEN, raw });
    expect(res.status).toBe(202);
    const results = res.json.results as Array<{
      status: number;
      event_id?: string;
      error?: { message: string };
    }>;
    expect(results.map((r) => r.status)).toEqual([202, 400, 202]);
    expect(results[1]?.error?.message).toBe(
      `data must not be nested more than ${MAX_DATA_DEPTH} levels deep`,
    );
    expect(await storedClickId(alice, results[0]!.event_id!)).toBe('before-deep');
    expect(await storedClickId(alice, results[2]!.event_id!)).toBe('deep-enough');
    const single = await api.call('POST', SINGLE, { key: SERVICE_TOKEN, raw: deep });
    expect([single.status, single.json.error.code]).toEqual([400, 'invalid_event']);
  });

  it('answers an item whose event would be over 256 KiB as its own 413, the rest stored', async () => {
    const alice = api.alice.account.id;
    const large = {
      ...item(alice, 'too-large'),
      data: { ...click('too-large'), referer: 'r'.repeat(MAX_EVENT_BODY_BYTES) },
    };
    const results = await batchResults([item(alice, 'before-large'), large, item(alice, 'after-large')]);
    expect(results.map((r) => [r.status, r.error?.code])).toEqual([
      [202, undefined],
      [413, 'payload_too_large'],
      [202, undefined],
    ]);
    const refusal =
      /^the payload delivered for this event \(\{event, timestamp, data\}\) would be 257 KiB; it may be at most 256 KiB$/;
    expect(results[1]!.error!.message).toMatch(refusal);
    expect(await storedClickId(alice, results[0]!.event_id!)).toBe('before-large');
    expect(await storedClickId(alice, results[2]!.event_id!)).toBe('after-large');
    // The same event as a request of its own is read (the route leaves room for its own fields),
    // and refused for the same reason.
    const single = await api.call('POST', SINGLE, { key: SERVICE_TOKEN, body: large });
    expect([single.status, single.json.error.code]).toEqual([413, 'payload_too_large']);
    expect(single.json.error.message).toMatch(refusal);
  });

  it('answers a batch of invalid items only, storing nothing', async () => {
    const endpoint = await clickEndpoint(api.alice.apiKey);
    const res = await batch([42, item('acct_nobody'), item(free.account.id)]);
    expect(res.status).toBe(202);
    expect(res.json.results.map((r: { status: number }) => r.status)).toEqual([400, 404, 403]);
    expect(await deliveriesOf(endpoint, api.alice.apiKey)).toEqual([]);
  });
});

describe('the batch limits', () => {
  it(`takes ${MAX_BATCH} events (a body over the single route's 256 KiB) and stores them all`, async () => {
    const endpoint = await clickEndpoint(api.alice.apiKey);
    const events = Array.from({ length: MAX_BATCH }, (_, i) => item(api.alice.account.id, `full-${i}`));
    expect(JSON.stringify({ events }).length).toBeGreaterThan(256 * 1024);
    const res = await batch(events);
    expect(res.status).toBe(202);
    const results = res.json.results as { status: number; event_id: string }[];
    expect(results).toHaveLength(MAX_BATCH);
    expect(results.every((r) => r.status === 202)).toBe(true);
    expect(new Set(results.map((r) => r.event_id)).size).toBe(MAX_BATCH);
    const log = await deliveriesOf(endpoint, api.alice.apiKey);
    expect(log.map((d) => d.event_id).sort()).toEqual(results.map((r) => r.event_id).sort());
    expect(await storedClickId(api.alice.account.id, results[MAX_BATCH - 1]!.event_id)).toBe(
      `full-${MAX_BATCH - 1}`,
    );
  });

  it(`answers 413 to ${MAX_BATCH + 1} events, naming the limit, and stores none of them`, async () => {
    const endpoint = await clickEndpoint(api.alice.apiKey);
    const events = Array.from({ length: MAX_BATCH + 1 }, () => item(api.alice.account.id));
    const res = await batch(events);
    expect(res.status).toBe(413);
    expect(res.json.error.code).toBe('payload_too_large');
    expect(res.json.error.message).toMatch(new RegExp(`at most ${MAX_BATCH} events`));
    expect(res.json.error.message).toMatch(new RegExp(`${MAX_BATCH + 1}`));
    expect(res.json).not.toHaveProperty('results');
    expect(await deliveriesOf(endpoint, api.alice.apiKey)).toEqual([]);
  });

  it('answers 400 invalid_request when events is empty, missing or not a list', async () => {
    const bodies: unknown[] = [
      { events: [] },
      {},
      { events: 'click' },
      { events: { 0: item(api.alice.account.id) } },
      { events: [item(api.alice.account.id)], extra: 1 },
      [item(api.alice.account.id)],
    ];
    for (const body of bodies) {
      const res = await api.call('POST', BATCH, { key: SERVICE_TOKEN, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error.code).toBe('invalid_request');
      expect(res.json.error.message).toMatch(/body/);
    }
    const nothing = await api.call('POST', BATCH, { key: SERVICE_TOKEN });
    expect(nothing.status).toBe(400);
    const broken = await api.call('POST', BATCH, { key: SERVICE_TOKEN, raw: '{"events":[' });
    expect(broken.status).toBe(400);
    expect(broken.json.error.message).toMatch(/not valid JSON/);
  });

  it('answers 413 to a body over the byte limit, and reads one just under it', async () => {
    const padded = (bytes: number) => {
      const shell = JSON.stringify({ events: [{ ...item(api.alice.account.id), pad: '' }] });
      const raw = shell.replace('"pad":""', `"pad":"${'x'.repeat(bytes - shell.length)}"`);
      expect(Buffer.byteLength(raw)).toBe(bytes);
      return raw;
    };
    const over = await api.call('POST', BATCH, { key: SERVICE_TOKEN, raw: padded(MAX_BATCH_BYTES + 1) });
    expect(over.status).toBe(413);
    expect(over.json.error.code).toBe('payload_too_large');
    expect(over.json.error.message).toMatch(/8192 KiB/);
    // Just under the limit the body is read: the item answers for itself (its extra field).
    const under = await api.call('POST', BATCH, { key: SERVICE_TOKEN, raw: padded(MAX_BATCH_BYTES) });
    expect(under.status).toBe(202);
    expect(under.json.results[0]).toMatchObject({ status: 400, error: { code: 'invalid_request' } });
  });
});

/**
 * Sends the headers of a POST with `contentLength` and only the first bytes of its body, and
 * resolves with the answer. A server that read the body before checking the token would wait for
 * the rest and never answer: then the request fails at its timeout.
 */
function answerBeforeBody(path: string, contentLength: number, authorization?: string) {
  return new Promise<{ status: number; json: { error: { code: string } } }>((resolve, reject) => {
    const url = new URL(api.base);
    const req = request({
      host: url.hostname,
      port: url.port,
      method: 'POST',
      path,
      agent: false,
      headers: {
        'content-type': 'application/json',
        'content-length': String(contentLength),
        ...(authorization ? { authorization } : {}),
      },
      timeout: 10_000,
    });
    req.on('timeout', () => {
      req.destroy();
      reject(new Error('no answer before the body was sent: the body was read first'));
    });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => {
        text += chunk;
      });
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) });
      });
    });
    req.flushHeaders();
    req.write('{"events":[');
  });
}

describe('the service token', () => {
  it('answers 401 without it, with a wrong one and with an account key, storing nothing', async () => {
    const endpoint = await clickEndpoint(api.alice.apiKey);
    const events = [item(api.alice.account.id)];
    for (const key of [null, 'svc_wrong_token', api.alice.apiKey]) {
      const res = await batch(events, { key });
      expect(res.status, String(key)).toBe(401);
      expect(res.json.error.code).toBe('unauthorized');
    }
    const lowercase = await api.call('POST', BATCH, {
      key: null,
      headers: { authorization: `bearer ${SERVICE_TOKEN}` },
      body: { events },
    });
    expect(lowercase.status).toBe(202);
    const log = await deliveriesOf(endpoint, api.alice.apiKey);
    expect(log.map((d) => d.event_id)).toEqual([lowercase.json.results[0].event_id]);
  });

  it('is checked before the body is read', async () => {
    // A body that is not JSON, or too large, still answers 401 to a stranger.
    const broken = await api.call('POST', BATCH, { key: 'svc_wrong_token', raw: '{"events":[' });
    expect(broken.status).toBe(401);
    const large = await api.call('POST', BATCH, { key: null, raw: ' '.repeat(MAX_BATCH_BYTES + 10) });
    expect(large.status).toBe(401);
    // The answer comes while most of the body is still unsent.
    for (const authorization of [undefined, 'Bearer svc_wrong_token']) {
      const early = await answerBeforeBody(BATCH, 1024 * 1024, authorization);
      expect(early.status).toBe(401);
      expect(early.json.error.code).toBe('unauthorized');
    }
  });
});

describe('the single ingest route beside it', () => {
  it('still publishes one event and answers its errors with their own status', async () => {
    const endpoint = await clickEndpoint(api.alice.apiKey);
    const body = item(api.alice.account.id, 'single-0');
    const ok = await api.call('POST', SINGLE, { key: SERVICE_TOKEN, body });
    expect(ok.status).toBe(202);
    expect(ok.json).not.toHaveProperty('results');
    expect(ok.json.event_id).toMatch(/^evt_/);
    expect(ok.json.deliveries.map((d: { endpoint_id: string }) => d.endpoint_id)).toContain(endpoint);
    expect(await storedClickId(api.alice.account.id, ok.json.event_id)).toBe('single-0');

    const cases: Array<[unknown, number, string]> = [
      [{ ...body, data: { ...click(), link_id: 'seven' } }, 400, 'invalid_event'],
      [item('acct_nobody'), 404, 'not_found'],
      [item(free.account.id), 403, 'plan_required'],
      [{ events: [body] }, 400, 'invalid_request'],
    ];
    for (const [input, status, code] of cases) {
      const res = await api.call('POST', SINGLE, { key: SERVICE_TOKEN, body: input });
      expect(res.status, JSON.stringify(input)).toBe(status);
      expect(res.json.error.code).toBe(code);
    }
    expect((await api.call('POST', SINGLE, { key: null, body })).status).toBe(401);
    // Its own body limit: the event's 256 KiB and room for the request's own fields.
    const huge = await api.call('POST', SINGLE, {
      key: SERVICE_TOKEN,
      body: { ...body, data: { ...click(), referer: 'x'.repeat(300_000) } },
    });
    expect(huge.status).toBe(413);
    expect(huge.json.error.code).toBe('payload_too_large');

    const log = await deliveriesOf(endpoint, api.alice.apiKey);
    expect(log.map((d) => d.event_id)).toEqual([ok.json.event_id]);
  });
});

describe('the OpenAPI document', () => {
  it('lists the batch route with its body, its results and its limits', async () => {
    const res = await api.call('GET', '/v1/openapi.json', { key: null });
    expect(res.status).toBe(200);
    const route = res.json.paths[BATCH]?.post;
    expect(route, 'POST /internal/v1/events/batch').toBeDefined();
    expect(Object.keys(route.responses)).toEqual(expect.arrayContaining(['202', '400', '401', '413']));
    expect(JSON.stringify(route.requestBody)).toMatch(/IngestBatch/);
    expect(JSON.stringify(route.responses['202'])).toMatch(/IngestBatchResult/);
    const schemas = res.json.components.schemas;
    expect(schemas.IngestBatch.required).toEqual(['events']);
    expect(schemas.IngestBatch.properties.events).toMatchObject({
      type: 'array',
      minItems: 1,
      maxItems: 1000,
    });
    expect(res.json.paths[SINGLE]?.post).toBeDefined();
  });
});
