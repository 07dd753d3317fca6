/**
 * A database out of reach answers 503 with `Retry-After` and the code `store_unavailable`, on
 * ingest (both paths) and the management API, and is logged; once it is back, the same requests
 * succeed without a restart. PostgreSQL is reached through a TCP relay the test cuts and restores,
 * as a restart or a failover does.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { sampleEventData } from '@linkhooks/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { type Api, SERVICE_TOKEN, startApi } from '../helpers/api-service.js';
import { pgSchemas } from '../helpers/pg-schemas.js';
import { PG_URL, requireService } from '../helpers/services.js';
import { createTestCertificates } from '../helpers/test-ca.mjs';

const pgUp = await requireService('PostgreSQL', PG_URL);

/**
 * A TCP relay to PostgreSQL: `open()` listens (on the port it had, once it has one), `cut()` drops
 * every connection and refuses new ones.
 */
function relay() {
  const target = new URL(PG_URL);
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  let port = 0;
  const open = () =>
    new Promise<number>((resolve) => {
      if (server) return resolve(port);
      server = createServer((client) => {
        const upstream = connect(Number(target.port || 5432), target.hostname);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('error', () => s.destroy());
          s.on('close', () => sockets.delete(s));
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as { port: number }).port;
        resolve(port);
      });
    });
  return {
    open,
    cut: () =>
      new Promise<void>((resolve) => {
        server?.close(() => resolve());
        server = null;
        for (const s of sockets) s.destroy();
      }),
  };
}

describe.runIf(pgUp)('the database out of reach', () => {
  const schemas = pgSchemas('lh_unavailable');
  const certs = createTestCertificates();
  const errors: string[] = [];
  const db = relay();
  let api: Api;
  beforeAll(async () => {
    const port = await db.open();
    const url = new URL(PG_URL);
    url.port = String(port);
    const store = createPostgresStore({
      connectionString: url.toString(),
      schema: schemas.fresh(),
      poolSize: 2,
    });
    api = await startApi(
      certs,
      { store },
      { logger: { error: (_entry: unknown, message: string) => errors.push(message) } as never },
    );
  });
  afterAll(async () => {
    await db.open();
    await api.close();
    await schemas.drop();
  });

  const ingest = (path: string, n: number) =>
    api.call('POST', path, {
      key: SERVICE_TOKEN,
      body: {
        account_id: api.alice.account.id,
        event: 'click',
        event_id: `click-${n}`,
        data: { ...sampleEventData('click'), click_id: `clk_${n}` },
      },
    });

  it('answers 503 with Retry-After while it is cut, and serves again once it is back', async () => {
    expect((await ingest('/internal/v1/events', 1)).status).toBe(202);
    await db.cut();
    for (const res of [
      await ingest('/internal/v1/events', 2),
      await ingest('/internal/v1/events?via=router', 3),
      await api.call('GET', '/v1/endpoints'),
    ]) {
      expect(res.status, res.text).toBe(503);
      expect(res.json.error).toEqual({
        code: 'store_unavailable',
        message: 'the database cannot be reached right now; try again shortly',
      });
      expect(res.headers.get('retry-after')).toBe('2');
    }
    expect(errors).toEqual(['management API error', 'management API error', 'management API error']);
    await db.open();
    for (const n of [2, 3]) expect((await ingest('/internal/v1/events', n)).status).toBe(202);
    expect((await api.call('GET', '/v1/endpoints')).status).toBe(200);
  });
});
