/**
 * Each endpoint's next due time on PostgreSQL (endpoint-due.ts): a held-up claim settles the
 * entries it found with nothing behind them and reads on past them in the same call, moving an
 * entry on never undoes the lowering of a publish it could not see, and each migrate repairs what a
 * release without the entries left.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_DISABLE_POLICY } from '../src/domain/disable-rule.js';
import { DEFAULT_SCHEDULE } from '../src/domain/schedule.js';
import { claimWalk, claimWindow } from '../src/store/claim-window.js';
import type { Published, SenderStore } from '../src/store/port.js';
import { createPostgresStore } from '../src/store/postgres/postgres-store.js';
import type { EventRecord } from '../src/store/records.js';
import { storeEndpoint } from './helpers/endpoints.js';
import { claimPastShare, HELD_UP_BACKLOG } from './helpers/held-up-claim.js';
import { blockedBy, inTransaction } from './helpers/pg-locks.js';
import { pgSchemas } from './helpers/pg-schemas.js';
import { PG_URL, requireService } from './helpers/services.js';

const up = await requireService('PostgreSQL', PG_URL);
const T0 = Date.UTC(2026, 10, 22, 12);
/** The stores' connections, told apart from other test files' by blockedBy. */
const APP = `lh_endpoint_due_${process.pid}`;

describe.runIf(up)('each endpoint’s next due time on PostgreSQL', () => {
  const schemas = pgSchemas('lh_endpoint_due');
  const pool = new pg.Pool({ connectionString: PG_URL, max: 3 });
  afterAll(async () => {
    await pool.end();
    await schemas.drop();
  });

  const setUp = async () => {
    const schema = schemas.fresh();
    const store = createPostgresStore({
      connectionString: PG_URL,
      schema,
      poolSize: 3,
      applicationName: APP,
    });
    await store.migrate();
    const endpointOf = (accountId: string, id: string) => storeEndpoint(store, accountId, id, T0);
    let n = 0;
    const publish = (accountId: string, at: number, via: SenderStore = store) => {
      const event: EventRecord = {
        id: `evt_${String(n++).padStart(8, '0')}`,
        accountId,
        name: 'click',
        body: new TextEncoder().encode('{}'),
        createdAt: at,
      };
      return via.publish(event, () => `dlv_${n}`);
    };
    const entries = async () => {
      const { rows } = await pool.query(
        `SELECT endpoint_id, next_due_at::float8 AS at FROM "${schema}".endpoint_due ORDER BY endpoint_id`,
      );
      return Object.fromEntries(rows.map((r) => [r.endpoint_id as string, r.at as number]));
    };
    /** Account A's backlog, more than a claim walks; returns the time past it. */
    const backlogOfA = async () => {
      await endpointOf('acct_a', 'ep_a');
      for (let i = 0; i < HELD_UP_BACKLOG; i++) await publish('acct_a', T0 + i);
      return T0 + HELD_UP_BACKLOG;
    };
    /** A claim at `now` with A's account at the claimer's share: held up, it reads past its walk. */
    const claimPast = (now: number) => claimPastShare(store, now, 'acct_a');
    return { schema, store, endpointOf, publish, entries, backlogOfA, claimPast };
  };

  it('settles the entries a held-up claim found with nothing to take, and finds in the same call what is due behind more of them than a claim walks', async () => {
    const { schema, store, endpointOf, publish, entries, backlogOfA, claimPast } = await setUp();
    const at = await backlogOfA();
    // More entries with nothing behind them than a claim reads, all before B's: endpoints whose
    // deliveries were all delivered (entries are left as they are by attempts).
    const stale = claimWalk(claimWindow(8)) + 40;
    await pool.query(
      `INSERT INTO "${schema}".endpoints (id, account_id, url, events, secret, created_at, updated_at)
       SELECT 'ep_done_' || lpad(i::text, 4, '0'), 'acct_done', 'https://done' || i || '.example.com/hook',
              '["click"]', 'whsec_test', $1::bigint, $1::bigint
       FROM generate_series(1, ${stale}) AS i`,
      [T0],
    );
    await pool.query(
      `INSERT INTO "${schema}".endpoint_due (endpoint_id, next_due_at)
       SELECT id, $1::bigint FROM "${schema}".endpoints WHERE account_id = 'acct_done'`,
      [T0],
    );
    await endpointOf('acct_b', 'ep_b');
    await publish('acct_b', at);
    const claimed = await claimPast(at + 1);
    expect(claimed.map((c) => c.delivery.endpointId)).toEqual(['ep_b']);
    // The stale ones are gone (the last ones in the background, which closing waits for); A's and
    // B's (in flight) stay.
    await store.close();
    expect(Object.keys(await entries())).toEqual(['ep_a', 'ep_b']);
  });

  it('moves an entry on to the endpoint’s next retry, and drops a paused endpoint’s', async () => {
    const { store, endpointOf, publish, entries, backlogOfA, claimPast } = await setUp();
    const at = await backlogOfA(); // every claim below is held up behind it
    await endpointOf('acct_r', 'ep_r');
    await publish('acct_r', at);
    await endpointOf('acct_p', 'ep_p');
    await publish('acct_p', at);
    await store.pauseEndpoint('acct_p', 'ep_p', at + 2);
    const [r] = (await claimPast(at + 3)).filter((c) => c.delivery.endpointId === 'ep_r');
    const failed = await store.recordAttempt({
      lease: { deliveryId: r!.delivery.id, leaseToken: r!.leaseToken },
      attempt: {
        deliveryId: r!.delivery.id,
        number: 1,
        startedAt: at + 4,
        durationMs: 12,
        statusCode: 500,
        failureKind: 'http_status',
        errorMessage: 'receiver answered 500',
        responseSnippet: 'oops',
        requestHeaders: { 'x-service-attempt': '1' },
      },
      rules: { schedule: DEFAULT_SCHEDULE, policy: DEFAULT_DISABLE_POLICY },
      now: at + 4,
    });
    expect(failed).toMatchObject({ applied: true, status: 'awaiting_retry' });
    const retryAt = failed.applied ? failed.nextAttemptAt! : 0;
    expect(await claimPast(at + 5)).toEqual([]);
    const after = await entries();
    expect(after.ep_r).toBe(retryAt);
    expect(after.ep_p).toBeUndefined();
    await store.close();
  });

  it('is lowered at each migrate where a release that kept no entries wrote deliveries', async () => {
    const { schema, store, endpointOf, publish, backlogOfA, claimPast } = await setUp();
    const at = await backlogOfA();
    await endpointOf('acct_b', 'ep_b');
    await publish('acct_b', at);
    // As an older release leaves it after a rollback: B's delivery, and no entry for it.
    await pool.query(`DELETE FROM "${schema}".endpoint_due WHERE endpoint_id = 'ep_b'`);
    expect(await claimPast(at + 1)).toEqual([]);
    await store.migrate();
    expect((await claimPast(at + 2)).map((c) => c.delivery.endpointId)).toEqual(['ep_b']);
    await store.close();
  });

  /** In a transaction of its own, endpoint `id` locked in `mode`, then `run`; committed after. */
  const holding = (schema: string, id: string, mode: string, run: (tx: pg.PoolClient) => Promise<void>) =>
    inTransaction(pool, schema, async (tx) => {
      await tx.query(`SELECT id FROM endpoints WHERE id = $1 FOR ${mode}`, [id]);
      await run(tx);
      await tx.query('COMMIT');
    });
  /** A settle under way: the entry moved on an hour, as settleDue writes it once its lock is held. */
  const MOVE_ON = `UPDATE endpoint_due SET next_due_at = next_due_at + 3600000 WHERE endpoint_id = $1`;

  it('leaves an entry whose endpoint another transaction holds, for a later claim', async () => {
    const { schema, store, endpointOf, entries, backlogOfA, claimPast } = await setUp();
    const at = await backlogOfA();
    await endpointOf('acct_s', 'ep_s');
    await pool.query(`INSERT INTO "${schema}".endpoint_due (endpoint_id, next_due_at) VALUES ('ep_s', $1)`, [
      T0,
    ]);
    // As a publish to it holds it: what it writes may not be visible to the claim yet.
    await holding(schema, 'ep_s', 'SHARE', async () => {
      await claimPast(at); // nothing to take: it finds the entry stale
      expect((await entries()).ep_s).toBe(T0);
    });
    await claimPast(at);
    expect((await entries()).ep_s).toBeUndefined();
    await store.close();
  });

  it('lowers again, in a publish that waited for the endpoint, an entry moved on meanwhile', async () => {
    const { schema, store, endpointOf, publish, entries } = await setUp();
    await endpointOf('acct_x', 'ep_x');
    await publish('acct_x', T0);
    expect((await entries()).ep_x).toBe(T0);
    let published: Promise<unknown> = Promise.resolve();
    await holding(schema, 'ep_x', 'NO KEY UPDATE', async (settling) => {
      published = publish('acct_x', T0 + 10);
      await blockedBy(pool, settling, APP); // its snapshot taken, the entry still early in it
      await settling.query(MOVE_ON, ['ep_x']);
    });
    await published;
    expect((await entries()).ep_x).toBe(T0 + 10);
    await store.close();
  });

  it('lowers an entry moved on meanwhile in two processes’ publishes at once, each stored once', async () => {
    const { schema, store, endpointOf, publish, entries } = await setUp();
    const other = createPostgresStore({
      connectionString: PG_URL,
      schema,
      poolSize: 2,
      applicationName: APP,
    });
    await endpointOf('acct_x', 'ep_x');
    await publish('acct_x', T0);
    let published: Promise<Published[]> = Promise.resolve([]);
    await holding(schema, 'ep_x', 'NO KEY UPDATE', async (settling) => {
      // Both saw the entry early and find it moved on: both write it, one after the other (or, when
      // their locks interleave, one is a deadlock's victim and runs again).
      published = Promise.all([publish('acct_x', T0 + 20), publish('acct_x', T0 + 10, other)]);
      await blockedBy(pool, settling, APP, 2);
      await settling.query(MOVE_ON, ['ep_x']);
    });
    expect((await published).map((p) => p.deliveries.length)).toEqual([1, 1]);
    expect((await entries()).ep_x).toBe(T0 + 10);
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM "${schema}".deliveries`);
    expect(rows[0].n).toBe(3);
    await Promise.all([store.close(), other.close()]);
  });
});
