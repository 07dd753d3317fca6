/**
 * The direct ingest path (design D56) against the Express router beside it, on the service's own
 * listener: a plain ingest request is answered directly; every other form goes on to the router and
 * is answered as before; both give the same answers, headers and sign-in count. Which one answered
 * shows in the ETag header, which only Express's res.json sets.
 */
import type { IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { sampleEventData } from '@linkhooks/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WHOLE_BODY_MAX_BYTES } from '../../src/api/array-member-body.js';
import { type Api, SERVICE_TOKEN, startApi } from '../helpers/api-service.js';
import { createTestCertificates } from '../helpers/test-ca.mjs';

const SINGLE = '/internal/v1/events';
const BATCH = '/internal/v1/events/batch';
const certs = createTestCertificates();

let api: Api;
/** What the service logged as errors (a 500 is logged; nothing else should be). */
const logged: unknown[] = [];
beforeAll(async () => {
  api = await startApi(certs, {}, { hsts: true, logger: { error: (entry: unknown) => logged.push(entry) } });
});
afterAll(async () => {
  await api.close();
});

const click = (n: number) => ({
  account_id: api.alice.account.id,
  event: 'click',
  data: { ...sampleEventData('click'), click_id: `clk_direct_${n}` },
});

const viaExpress = (headers: Headers) => headers.get('etag') !== null;

describe('the direct ingest path', () => {
  it('answers a plain single and batch ingest itself, with the headers the router gives', async () => {
    const one = await api.call('POST', SINGLE, { key: SERVICE_TOKEN, body: click(1) });
    expect(one.status, one.text).toBe(202);
    expect(viaExpress(one.headers)).toBe(false);
    expect(one.json).toMatchObject({ event_id: expect.stringMatching(/^evt_/), deliveries: [] });
    expect(one.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(one.headers.get('cache-control')).toBe('no-store');
    expect(one.headers.get('x-content-type-options')).toBe('nosniff');
    expect(one.headers.get('strict-transport-security')).toBe('max-age=31536000');

    const many = await api.call('POST', BATCH, {
      key: SERVICE_TOKEN,
      body: { events: [click(2), { ...click(3), event: 'nope' }] },
    });
    expect(many.status).toBe(202);
    expect(viaExpress(many.headers)).toBe(false);
    expect(many.json.results.map((r: { status: number }) => r.status)).toEqual([202, 400]);
  });

  it('leaves every other form of the request to the router, which answers it as before', async () => {
    const body = JSON.stringify(click(4));
    // A query string, a gzip body, a charset other than UTF-8 and chunked bodies are the router's.
    const query = await api.call('POST', `${SINGLE}?source=test`, { key: SERVICE_TOKEN, raw: body });
    expect([query.status, viaExpress(query.headers)]).toEqual([202, true]);
    const gzip = await fetch(api.base + SINGLE, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${SERVICE_TOKEN}`,
        'content-type': 'application/json',
        'content-encoding': 'gzip',
      },
      body: gzipSync(body),
    });
    expect([gzip.status, viaExpress(gzip.headers)]).toEqual([202, true]);
    const latin1 = await api.call('POST', SINGLE, {
      key: SERVICE_TOKEN,
      raw: body,
      headers: { 'content-type': 'application/json; charset=iso-8859-1' },
    });
    expect([latin1.status, viaExpress(latin1.headers)]).toEqual([400, true]);
    expect(latin1.json.error.message).toMatch(/could not be read/);
    const text = await api.call('POST', SINGLE, {
      key: SERVICE_TOKEN,
      raw: body,
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(400);
    expect(text.json.error.message).toBe('send the body as JSON with "Content-Type: application/json"');
  });

  it('answers a body that does not decompress as its Content-Encoding says with a 400, not a 500', async () => {
    const body = gzipSync(JSON.stringify(click(8)));
    for (const [encoding, bytes] of [
      ['gzip', Buffer.from('not gzip at all')],
      ['gzip', body.subarray(0, body.length - 12)],
      ['deflate', Buffer.from('not deflate either')],
      ['br', Buffer.from('not brotli either')],
    ] as const) {
      for (const path of [SINGLE, BATCH]) {
        const before = logged.length;
        const res = await fetch(api.base + path, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${SERVICE_TOKEN}`,
            'content-type': 'application/json',
            'content-encoding': encoding,
          },
          body: bytes,
        });
        const json = (await res.json()) as { error: { code: string; message: string } };
        expect([res.status, json.error.code], `${encoding} ${path}`).toEqual([400, 'invalid_request']);
        expect(json.error.message).toMatch(
          /^the request body could not be decompressed as its Content-Encoding says: /,
        );
        expect(logged.length, 'a client error is not logged').toBe(before);
      }
    }
  });

  it('answers bad input, a wrong token and a missing account as the router does', async () => {
    const broken = await api.call('POST', SINGLE, { key: SERVICE_TOKEN, raw: '{"account_id":' });
    const brokenViaRouter = await api.call('POST', `${SINGLE}?x`, {
      key: SERVICE_TOKEN,
      raw: '{"account_id":',
    });
    expect(viaExpress(broken.headers)).toBe(false);
    expect([broken.status, broken.json]).toEqual([brokenViaRouter.status, brokenViaRouter.json]);
    expect(broken.json.error.code).toBe('invalid_request');

    // Not an object or an array: refused alike on both paths, JSON or not.
    for (const [raw, message] of [
      ['null', 'the request body must be a JSON object, not null'],
      ['5', 'the request body must be a JSON object, not a number'],
      [' "x"', 'the request body must be a JSON object, not a string'],
      ['\n ', /^the request body is not valid JSON: /],
      ['nul', /^the request body is not valid JSON: /],
    ] as const) {
      const direct = await api.call('POST', SINGLE, { key: SERVICE_TOKEN, raw });
      const routed = await api.call('POST', `${SINGLE}?x`, { key: SERVICE_TOKEN, raw });
      expect(viaExpress(direct.headers), raw).toBe(false);
      expect([direct.status, direct.json], raw).toEqual([routed.status, routed.json]);
      expect(direct.json.error.message, raw).toMatch(message);
    }

    for (const [name, options] of [
      ['wrong token', { key: 'svc_wrong', body: click(5) }],
      ['no account', { key: SERVICE_TOKEN, body: { ...click(6), account_id: 'acct_missing' } }],
      ['bad event', { key: SERVICE_TOKEN, body: { ...click(7), data: { click_id: 1 } } }],
    ] as const) {
      const direct = await api.call('POST', SINGLE, options);
      const routed = await api.call('POST', `${SINGLE}?x`, options);
      expect(viaExpress(direct.headers), name).toBe(false);
      expect([direct.status, direct.json], name).toEqual([routed.status, routed.json]);
      expect(direct.status, name).toBeGreaterThanOrEqual(400);
    }
  });
});

describe('a batch body too large to parse whole (design D63)', () => {
  const long = (n: number) => ({
    ...click(n),
    data: {
      ...click(n).data,
      destination_url: `https://shop.example.com/summer?utm_content=${'x'.repeat(900)}&n=${n}`,
    },
  });
  /** The same body to both paths: the answers' statuses and errors match, item by item. */
  async function bothPaths(raw: string) {
    expect(Buffer.byteLength(raw)).toBeGreaterThan(WHOLE_BODY_MAX_BYTES);
    const direct = await api.call('POST', BATCH, { key: SERVICE_TOKEN, raw });
    const routed = await api.call('POST', `${BATCH}?x`, { key: SERVICE_TOKEN, raw });
    expect([viaExpress(direct.headers), viaExpress(routed.headers)]).toEqual([false, true]);
    return { direct, routed };
  }
  it('answers every item as the router does, in order', async () => {
    // Each item names its event: the router, sent the same body second, finds each one stored by
    // the direct path and answers it with that event's id, in the same place.
    const events: unknown[] = Array.from({ length: 150 }, (_, n) => ({
      ...long(1_000 + n),
      event_id: `big-${n}`,
    }));
    events[3] = { ...long(3), event: 'nope' };
    events[77] = 5;
    events[149] = { ...long(149), data: { click_id: 1 } };
    const raw = `{ "events" :\n[${events.map((e) => JSON.stringify(e)).join(',\n ')}]\n}`;
    const { direct, routed } = await bothPaths(raw);
    expect(direct.status, direct.text).toBe(202);
    const errors = new Set([3, 77, 149]);
    const answers = (json: { results: Array<{ status: number; event_id?: string; error?: unknown }> }) =>
      json.results.map((r, n) => (errors.has(n) ? r : [r.status, r.event_id]));
    expect(answers(direct.json)).toHaveLength(150);
    expect(answers(routed.json)).toEqual(
      answers(direct.json).map((a, n) => (errors.has(n) ? a : [200, (a as [number, string])[1]])),
    );
    expect(answers(direct.json).filter((a) => Array.isArray(a) && a[0] === 202)).toHaveLength(147);
  });

  it('refuses a large body that is not JSON, or not of that form, as the router does', async () => {
    const items = Array.from({ length: 140 }, (_, n) => JSON.stringify(long(2_000 + n)));
    for (const raw of [
      `{"events":[${items.join(',')},{"a":1,}]}`,
      `{"events":[${items.join(',')}]} trailing`,
      `{"events":[${items.join(',')}],"more":1}`,
    ]) {
      const { direct, routed } = await bothPaths(raw);
      expect(direct.status, raw.slice(-20)).toBe(400);
      expect(direct.json, raw.slice(-20)).toEqual(routed.json);
    }
  });
});

describe('a batch body parsed whole in a turn of the budget (design D74)', () => {
  const item = (n: number) => ({
    ...click(n),
    event_id: `mid-${n}`,
    data: {
      ...click(n).data,
      destination_url: `https://shop.example.com/?utm_content=${'y'.repeat(900)}&n=${n}`,
    },
  });
  it('answers a body over 64 KiB and under the size read an item at a time as the router does', async () => {
    const events: unknown[] = Array.from({ length: 70 }, (_, n) => item(3_000 + n));
    events[9] = { ...item(9), event: 'nope' };
    const raw = JSON.stringify({ events });
    expect(Buffer.byteLength(raw)).toBeGreaterThan(64 * 1024);
    expect(Buffer.byteLength(raw)).toBeLessThanOrEqual(WHOLE_BODY_MAX_BYTES);
    const direct = await api.call('POST', BATCH, { key: SERVICE_TOKEN, raw });
    const routed = await api.call('POST', `${BATCH}?x`, { key: SERVICE_TOKEN, raw });
    expect([viaExpress(direct.headers), viaExpress(routed.headers)]).toEqual([false, true]);
    const statuses = (json: { results: Array<{ status: number }> }) => json.results.map((r) => r.status);
    expect(statuses(direct.json)).toEqual(events.map((_, n) => (n === 9 ? 400 : 202)));
    // The router, sent the same events second, finds each one stored by the direct path.
    expect(statuses(routed.json)).toEqual(events.map((_, n) => (n === 9 ? 400 : 200)));
    for (const broken of [`${raw.slice(0, -2)},]}`, `${raw} trailing`]) {
      const a = await api.call('POST', BATCH, { key: SERVICE_TOKEN, raw: broken });
      const b = await api.call('POST', `${BATCH}?x`, { key: SERVICE_TOKEN, raw: broken });
      expect(viaExpress(a.headers)).toBe(false);
      expect([a.status, a.json]).toEqual([400, b.json]);
    }
  });
});

describe('a client that goes away mid-body', () => {
  it('costs nothing but its own request: no error logged, and the next request is answered', async () => {
    const arrived = new Promise<IncomingMessage>((resolve) => api.server.once('request', resolve));
    const socket = connect((api.server.address() as { port: number }).port, '127.0.0.1');
    socket.write(
      `POST ${SINGLE} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${SERVICE_TOKEN}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"account_id":',
    );
    const req = await arrived;
    // The request's handler runs its answer on microtasks after the stream's close: one turn later
    // it has answered (or logged) whatever it would.
    const handled = new Promise((resolve) => req.once('close', () => setImmediate(resolve)));
    socket.destroy();
    await handled;
    expect(logged).toEqual([]);
    expect((await api.call('POST', SINGLE, { key: SERVICE_TOKEN, body: click(9) })).status).toBe(202);
  });
});

describe('one sign-in limit for both paths', () => {
  let limited: Api;
  beforeAll(async () => {
    limited = await startApi(certs, {}, { signInFailuresPerMinute: 2, trustProxy: true });
  });
  afterAll(async () => {
    await limited.close();
  });

  it('counts wrong tokens on either path against the forwarded client, and refuses the next on both', async () => {
    const from = (address: string, query = '') =>
      limited.call('POST', SINGLE + query, {
        key: 'svc_wrong',
        body: click(8),
        headers: { 'x-forwarded-for': `198.51.100.1, ${address}` },
      });
    expect((await from('203.0.113.50')).status).toBe(401);
    expect((await from('203.0.113.50', '?x')).status).toBe(401);
    const direct = await from('203.0.113.50');
    const routed = await from('203.0.113.50', '?x');
    expect([direct.status, viaExpress(direct.headers)]).toEqual([429, false]);
    expect([routed.status, viaExpress(routed.headers)]).toEqual([429, true]);
    expect(direct.headers.get('retry-after')).toMatch(/^\d+$/);
    // Another client behind the same proxy is not held back.
    expect((await from('203.0.113.51')).status).toBe(401);
  });
});
