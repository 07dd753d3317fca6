/**
 * The ingest a service holds at once (api/ingest-admission.ts): past its budget of bodies in
 * flight an ingest request answers 503 `overloaded` with Retry-After before its body is read, on
 * the direct path and the router's alike; the budget comes back when a request is answered or its
 * client goes; a request alone is taken whatever its size.
 */
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { sampleEventData } from '@linkhooks/protocol';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, SERVICE_TOKEN, startApi } from '../helpers/api-service.js';
import { createTestCertificates } from '../helpers/test-ca.mjs';

const SINGLE = '/internal/v1/events';
const BUDGET = 3_200;
const HELD_BYTES = 3_000;
const certs = createTestCertificates();

let api: Api;
beforeAll(async () => {
  api = await startApi(certs, {}, { ingestBytesInFlight: BUDGET });
});
afterAll(async () => {
  await api.close();
});

const click = (id: string, pad = '') => ({
  account_id: api.alice.account.id,
  event: 'click',
  data: { ...sampleEventData('click'), click_id: id, destination_url: `https://shop.example.com/?p=${pad}` },
});

/** A click exactly `bytes` long as JSON. */
function clickOf(id: string, bytes: number): string {
  const bare = JSON.stringify(click(id)).length;
  const body = JSON.stringify(click(id, 'x'.repeat(bytes - bare)));
  expect(body.length).toBe(bytes);
  return body;
}

/**
 * An ingest request whose headers have come in and whose body has not: the service answers
 * `100 Continue` as it takes the request, so once the client reads it the request is held.
 */
async function heldRequest(bytes: number): Promise<{ socket: Socket; answer: Promise<string> }> {
  const socket = connect((api.server.address() as { port: number }).port, '127.0.0.1');
  socket.write(
    `POST ${SINGLE} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${SERVICE_TOKEN}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${bytes}\r\nExpect: 100-continue\r\n` +
      'Connection: close\r\n\r\n',
  );
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    received += chunk;
  });
  while (!received.includes('100 Continue')) await once(socket, 'data');
  const answer = new Promise<string>((resolve) => socket.once('end', () => resolve(received)));
  return { socket, answer };
}

const overloaded = (res: { status: number; headers: Headers; json: { error: { code: string } } }) => [
  res.status,
  res.json.error.code,
  res.headers.get('retry-after'),
];

describe('ingest held at once', () => {
  it('answers 503 overloaded past the budget, on both paths, until the request ahead is answered', async () => {
    const held = await heldRequest(HELD_BYTES);
    const direct = await api.call('POST', SINGLE, { key: SERVICE_TOKEN, body: click('clk_over_1') });
    expect(overloaded(direct)).toEqual([503, 'overloaded', '1']);
    expect(direct.json.error.message).toMatch(/send this again after Retry-After/);
    // A body of no declared length (the router's) counts as the route's largest.
    const chunked = await fetch(api.base + SINGLE, {
      method: 'POST',
      headers: { authorization: `Bearer ${SERVICE_TOKEN}`, 'content-type': 'application/json' },
      body: new Blob([JSON.stringify(click('clk_over_2'))]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect([chunked.status, ((await chunked.json()) as { error: { code: string } }).error.code]).toEqual([
      503,
      'overloaded',
    ]);
    // Credentials come first: a stranger is told 401, not how busy the service is.
    const stranger = await api.call('POST', SINGLE, { key: 'svc_wrong_token_0123456789', body: click('x') });
    expect(stranger.status).toBe(401);

    held.socket.write(clickOf('clk_held', HELD_BYTES));
    expect(await held.answer).toMatch(/HTTP\/1\.1 202 Accepted/);
    const after = await api.call('POST', SINGLE, { key: SERVICE_TOKEN, body: click('clk_after') });
    expect(after.status, after.text).toBe(202);
    // Of the clicks sent, the refused ones were never stored.
    const db = new Database(api.dbFile, { readonly: true });
    try {
      const stored = db
        .prepare(`SELECT click_id FROM events WHERE click_id LIKE 'clk_%' ORDER BY click_id`)
        .all();
      expect(stored).toEqual([{ click_id: 'clk_after' }, { click_id: 'clk_held' }]);
    } finally {
      db.close();
    }
  });

  it('takes the budget back from a client that goes mid-body', async () => {
    const [serverSide] = await Promise.all([
      once(api.server, 'connection').then(([s]) => s as Socket),
      heldRequest(HELD_BYTES).then(({ socket }) => socket.destroy()),
    ]);
    // Not once(): the socket's end mid-body is an error of the request's (a parse error) first.
    await new Promise((resolve) => serverSide.once('close', resolve));
    await nextTurn(); // the response's own close follows the socket's
    const after = await api.call('POST', SINGLE, { key: SERVICE_TOKEN, body: click('clk_after_gone') });
    expect(after.status, after.text).toBe(202);
  });

  it('takes a request alone whatever its size', async () => {
    const large = await api.call('POST', SINGLE, {
      key: SERVICE_TOKEN,
      raw: clickOf('clk_large', BUDGET * 2),
    });
    expect(large.status, large.text).toBe(202);
  });
});
