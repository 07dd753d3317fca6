/**
 * A database out of reach answers 503 with `Retry-After` and the code `store_unavailable`, on
 * ingest (both paths) and the management API, and is logged; once it is back, the same requests
 * succeed without a restart. PostgreSQL is reached through a TCP relay the test cuts and restores,
 * as a restart or a failover does, or silences: it holds every connection and answers nothing, as a
 * network partition or a stuck proxy does, where only the store's query timeout ends the wait.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { sampleEventData } from '@linkhooks/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect as connectPg } from '../../src/store/postgres/connection.js';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { storeUnavailable } from '../../src/store/unavailable.js';
import { type Api, SERVICE_TOKEN, startApi } from '../helpers/api-service.js';
import { pgSchemas } from '../helpers/pg-schemas.js';
import { PG_URL, requireService } from '../helpers/services.js';
import { createTestCertificates } from '../helpers/test-ca.mjs';

const pgUp = await requireService('PostgreSQL', PG_URL);

/**
 * A TCP relay to PostgreSQL: `open()` listens (on the port it had, once it has one) and ends a
 * silence, dropping the connections it held; `cut()` drops every connection and refuses new ones;
 * `silence()` stops passing anything on, and holds new connections without a word (`held()` of them).
 */
function relay() {
  const target = new URL(PG_URL);
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  let port = 0;
  let silent = false;
  let held = 0;
  const hold = (s: Socket) => {
    s.unpipe();
    s.pause();
  };
  const open = () =>
    new Promise<number>((resolve) => {
      if (silent) {
        silent = false;
        for (const s of sockets) s.destroy();
      }
      if (server) return resolve(port);
      server = createServer((client) => {
        if (silent) {
          held++;
          sockets.add(client);
          client.on('error', () => client.destroy());
          client.on('close', () => sockets.delete(client));
          return hold(client);
        }
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
    /** How many new connections it has held since the last `silence()`. */
    held: () => held,
    silence() {
      silent = true;
      held = 0;
      for (const s of sockets) hold(s);
    },
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
  /** A store on a fresh schema, reached through the relay, that waits 1 s (or `queryTimeoutMs`) for an answer. */
  const storeThroughRelay = async (queryTimeoutMs = 1_000) => {
    const url = new URL(PG_URL);
    url.port = String(await db.open());
    return createPostgresStore({
      connectionString: url.toString(),
      schema: schemas.fresh(),
      poolSize: 2,
      queryTimeoutMs,
    });
  };
  let api: Api;
  beforeAll(async () => {
    const store = await storeThroughRelay();
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

  /** Runs `n` statements at once: the ms after which each failed as "not now", NaN for any other end. */
  const failingAfter = (run: () => Promise<unknown>, n: number) => {
    const started = performance.now();
    return Promise.all(
      Array.from({ length: n }, () =>
        run().then(
          () => Number.NaN,
          (error: unknown) => (storeUnavailable(error) ? performance.now() - started : Number.NaN),
        ),
      ),
    );
  };

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

  it('answers 503 within its query timeout while the database is silent, and serves again after', async () => {
    expect((await ingest('/internal/v1/events', 4)).status).toBe(202);
    db.silence();
    errors.length = 0;
    // The first on the connections the pools hold, the last two on new ones, never made.
    for (const res of [
      await ingest('/internal/v1/events', 5),
      await api.call('GET', '/v1/endpoints'),
      await ingest('/internal/v1/events', 5),
      await api.call('GET', '/v1/endpoints'),
    ]) {
      expect(res.status, res.text).toBe(503);
      expect(res.json.error.code).toBe('store_unavailable');
    }
    await db.open();
    expect((await ingest('/internal/v1/events', 5)).status).toBe(202);
  });

  it('fails statements and transactions, and closes, within its query timeout while the database is silent', async () => {
    const store = await storeThroughRelay();
    await store.migrate();
    // Two pooled connections open, one for each statement below.
    expect(await Promise.all([store.nextDueAt(), store.nextDueAt()])).toEqual([null, null]);
    // The listener's connection open too: it wakes its listener once it listens.
    await new Promise<void>((resolve) => store.subscribe?.(resolve));
    db.silence();
    // A statement on its own, and one in a transaction (whose connection the pool does not
    // listen to while it is out): both fail, and the process goes on.
    const unavailable = (error: unknown) => storeUnavailable(error) !== null;
    await Promise.all([
      expect(store.nextDueAt()).rejects.toSatisfy(unavailable),
      expect(store.pauseEndpoint('acct_silent', 'ep_silent', Date.now())).rejects.toSatisfy(unavailable),
    ]);
    await store.close();
    await db.open();
  });

  it('fails the statements waiting for a pooled connection within the timeout, however many wait, while the database is silent', async () => {
    const store = await storeThroughRelay();
    await store.migrate();
    expect(await Promise.all([store.nextDueAt(), store.nextDueAt()])).toEqual([null, null]);
    db.silence();
    // Two on the pool's connections, eight waiting for them. Each wait used to last until the one
    // ahead of it had failed: a new connection each, after the timeout, two at a time (5 s here).
    const failedAfter = await failingAfter(() => store.nextDueAt(), 10);
    // The timeout, and at most one check of the watchdog's (a tenth of it) after: 1.1 s. The
    // bound leaves room for a slow machine, under the second round of the old waits (2 s).
    expect(Math.max(...failedAfter)).toBeLessThan(1_900);
    expect(failedAfter.every((ms) => ms >= 1_000)).toBe(true);
    const closing = performance.now();
    await store.close();
    expect(performance.now() - closing).toBeLessThan(1_900);
    await db.open();
  });

  /** The store's connections alone, through the relay, pools of two, a 1 s timeout. */
  const poolsThroughRelay = async () => {
    const url = new URL(PG_URL);
    url.port = String(await db.open());
    return connectPg({
      connectionString: url.toString(),
      schema: 'public',
      poolSize: 2,
      applicationName: 'linkhooks-test',
      queryTimeoutMs: 1_000,
    });
  };
  it('times the waits that queue beside an idle connection with room for another', async () => {
    const pg = await poolsThroughRelay();
    expect(await pg.rows('SELECT 1 AS one', [])).toEqual([{ one: 1 }]);
    db.silence();
    // One connection idle, room for a second: the first two are served, the other six queue
    // behind them, and each of those used to wait for a connection of its own (4 s for the last).
    const failedAfter = await failingAfter(() => pg.rows('SELECT 1 AS one', []), 8);
    expect(Math.max(...failedAfter)).toBeLessThan(1_900);
    await pg.end();
    await db.open();
  });

  it('leaves no wait queued once they have failed, and serves again once the database answers', async () => {
    const pg = await poolsThroughRelay();
    expect(await pg.rows('SELECT 1 AS one', [])).toEqual([{ one: 1 }]);
    db.silence();
    const failedAfter = await failingAfter(() => pg.rows('SELECT 1 AS one', []), 3_000);
    expect(failedAfter.every((ms) => ms < 1_900)).toBe(true);
    expect(pg.pool.waitingCount).toBe(0);
    await db.open();
    expect(await pg.rows('SELECT 1 AS one', [])).toEqual([{ one: 1 }]);
    await pg.end();
  });

  it('answers every statement still waiting when it closes', async () => {
    const pg = await poolsThroughRelay();
    await Promise.all([pg.rows('SELECT 1', []), pg.rows('SELECT 1', [])]);
    // Two connections idle, three statements: the third waits, and the close comes before the
    // pool hands out any (it does so on its next tick).
    const statements = Promise.allSettled(Array.from({ length: 3 }, () => pg.rows('SELECT 1 AS one', [])));
    await pg.end();
    const settled = await statements;
    expect(settled.map((s) => s.status === 'rejected' && storeUnavailable(s.reason) !== null)).toEqual([
      true,
      true,
      true,
    ]);
  });

  it('closes at once while connections are being made to a silent database', async () => {
    // A timeout long enough to tell a close that waits for the connection (20 s) or for its
    // goodbye (5 s) from one that drops it.
    const store = await storeThroughRelay(20_000);
    db.silence();
    // The pool makes a connection for the statement, the listener its own: the relay holds both
    // without a word.
    const statement = store.nextDueAt().catch((error: unknown) => error);
    store.subscribe?.(() => undefined);
    await expect.poll(() => db.held() >= 2).toBe(true);
    const closing = performance.now();
    await store.close();
    expect(performance.now() - closing).toBeLessThan(2_000);
    expect(storeUnavailable(await statement)).not.toBeNull();
    await db.open();
  });
});
