/**
 * The ingest a service holds at once (api/ingest-admission.ts): past its budget of bodies in
 * flight an ingest request answers 503 `overloaded` with Retry-After before its body is read, on
 * the direct path and the router's alike; a request holds its share until its work is over, not
 * only while its client waits; the budget comes back once it is; a request alone is taken
 * whatever its size; other routes of the service token take none of it.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { sampleEventData } from '@linkhooks/protocol';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SenderStore } from '../../src/store/port.js';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { type Api, SERVICE_TOKEN, startApi } from '../helpers/api-service.js';
import { createTestCertificates } from '../helpers/test-ca.mjs';

const SINGLE = '/internal/v1/events';
const BUDGET = 3_200;
const certs = createTestCertificates();

const click = (api: Api, id: string, pad = '') => ({
  account_id: api.alice.account.id,
  event: 'click',
  data: { ...sampleEventData('click'), click_id: id, destination_url: `https://shop.example.com/?p=${pad}` },
});

/** A click exactly `bytes` long as JSON. */
function clickOf(api: Api, id: string, bytes: number): string {
  const bare = JSON.stringify(click(api, id)).length;
  const body = JSON.stringify(click(api, id, 'x'.repeat(bytes - bare)));
  expect(body.length).toBe(bytes);
  return body;
}

/**
 * An ingest request of `bytes` whose headers have come in and whose body has not: the service
 * answers `100 Continue` as it takes the request (before its admission, in the same turn), so
 * once the client reads it the request holds its share.
 */
async function heldRequest(api: Api, bytes: number) {
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

/** The server's side of the next connection, closed: what it answered is over. */
const serverSideClosed = (api: Api) =>
  once(api.server, 'connection').then(
    // Not once(): the socket's end mid-body is an error of the request's (a parse error) first.
    ([socket]) => new Promise((resolve) => (socket as Socket).once('close', resolve)),
  );

const codeOf = (res: { status: number; headers: Headers; json: { error?: { code: string } } }) => [
  res.status,
  res.json.error?.code,
  res.headers.get('retry-after'),
];

const post = (api: Api, body: unknown) => api.call('POST', SINGLE, { key: SERVICE_TOKEN, body });

describe('ingest held at once', () => {
  let api: Api;
  beforeAll(async () => {
    api = await startApi(certs, {}, { ingestBytesInFlight: BUDGET });
  });
  afterAll(async () => {
    await api.close();
  });

  it('answers 503 overloaded past the budget until the request ahead is answered', async () => {
    const held = await heldRequest(api, 3_000);
    const refused = await post(api, click(api, 'clk_over_1'));
    expect(codeOf(refused)).toEqual([503, 'overloaded', '1']);
    expect(refused.json.error.message).toMatch(/send this again after Retry-After/);
    const metrics = await api.call('GET', '/metrics', { key: null });
    expect(metrics.text).toMatch(/^linkhooks_ingest_overloaded_total 1$/m);
    // Credentials come first: a stranger is told 401, not how busy the service is.
    const stranger = await api.call('POST', SINGLE, {
      key: 'svc_wrong_token_0123456789',
      body: click(api, 'x'),
    });
    expect(stranger.status).toBe(401);
    // The service token's other routes take none of the budget.
    const rotated = await api.call('POST', `/internal/v1/accounts/${api.bob.account.id}/keys/rotate`, {
      key: SERVICE_TOKEN,
      body: {},
    });
    expect(rotated.status, rotated.text).toBe(201);

    held.socket.write(clickOf(api, 'clk_held', 3_000));
    expect(await held.answer).toMatch(/HTTP\/1\.1 202 Accepted/);
    const after = await post(api, click(api, 'clk_after'));
    expect(after.status, after.text).toBe(202);
    // Of the clicks sent, the refused one was never stored.
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

  it('counts a body of no declared length (the router’s) as the route’s largest', async () => {
    const held = await heldRequest(api, 1_000);
    // Its 300 bytes would fit beside the held 1,000; the route's largest (260 KiB) do not.
    const chunked = await fetch(api.base + SINGLE, {
      method: 'POST',
      headers: { authorization: `Bearer ${SERVICE_TOKEN}`, 'content-type': 'application/json' },
      body: new Blob([JSON.stringify(click(api, 'clk_chunked'))]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect([chunked.status, ((await chunked.json()) as { error: { code: string } }).error.code]).toEqual([
      503,
      'overloaded',
    ]);
    const plain = await post(api, click(api, 'clk_beside'));
    expect(plain.status, plain.text).toBe(202);
    held.socket.write(clickOf(api, 'clk_held_2', 1_000));
    expect(await held.answer).toMatch(/HTTP\/1\.1 202 Accepted/);
  });

  it('takes the budget back from a client that goes mid-body', async () => {
    const closed = serverSideClosed(api);
    (await heldRequest(api, 3_000)).socket.destroy();
    await closed;
    await nextTurn(); // the request's read fails, and its answer settles, after the socket's close
    const after = await post(api, click(api, 'clk_after_gone'));
    expect(after.status, after.text).toBe(202);
  });

  it('takes a request alone whatever its size', async () => {
    const large = await api.call('POST', SINGLE, {
      key: SERVICE_TOKEN,
      raw: clickOf(api, 'clk_large', BUDGET * 2),
    });
    expect(large.status, large.text).toBe(202);
  });
});

describe('a request whose client gave up', () => {
  let api: Api;
  let publishing: () => void;
  const started = new Promise<void>((resolve) => {
    publishing = resolve;
  });
  let letPublish: () => void;
  const gate = new Promise<void>((resolve) => {
    letPublish = resolve;
  });
  const dir = mkdtempSync(join(tmpdir(), 'linkhooks-gated-'));
  beforeAll(async () => {
    // A store whose publish waits: the request's work goes on after its client has gone.
    const inner = createSqliteStore({ filename: join(dir, 'gated.db') });
    const store: SenderStore = {
      ...inner,
      publish: async (...args) => {
        publishing();
        await gate;
        return inner.publish(...args);
      },
    };
    api = await startApi(certs, { store }, { ingestBytesInFlight: BUDGET });
  });
  afterAll(async () => {
    letPublish();
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds its share until its work is over', async () => {
    const port = (api.server.address() as { port: number }).port;
    const body = clickOf(api, 'clk_gave_up', 3_000);
    const closed = serverSideClosed(api);
    const socket = connect(port, '127.0.0.1');
    socket.write(
      `POST ${SINGLE} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${SERVICE_TOKEN}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    await started;
    socket.destroy();
    await closed;
    await nextTurn();
    const refused = await post(api, click(api, 'clk_while_storing'));
    expect(codeOf(refused)).toEqual([503, 'overloaded', '1']);
  });
});
