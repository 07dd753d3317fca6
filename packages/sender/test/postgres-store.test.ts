/**
 * The PostgreSQL store against a real server (design C7): the conformance battery, with
 * every store on its own fresh schema, plus what only a shared database can show — concurrent
 * migrations, concurrent claimers, LISTEN/NOTIFY across instances. Every connection a store opens
 * carries this file's application_name; after each test none may be left (no leaked pool or client).
 */
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { newApiKey } from '../src/accounts.js';
import { DEFAULT_DISABLE_POLICY } from '../src/domain/disable-rule.js';
import { COUNT_DIGITS, ID_ALPHABET, idDigits, newId, newRun, RUN_DIGITS } from '../src/domain/ids.js';
import { DEFAULT_SCHEDULE } from '../src/domain/schedule.js';
import type { TransitionRules } from '../src/domain/transition.js';
import { claimWindow } from '../src/store/claim-window.js';
import type { AttemptResult, ClaimRequest, SenderStore } from '../src/store/port.js';
import {
  CLAIM_DUE,
  CLAIM_WALK,
  claimParams,
  createClaimer,
  WALK_PARAMS,
} from '../src/store/postgres/claim-due.js';
import { connect, type Pg } from '../src/store/postgres/connection.js';
import { createDueSettler } from '../src/store/postgres/endpoint-due.js';
import { PG_MIGRATIONS } from '../src/store/postgres/migrate.js';
import { NEXT_DUE } from '../src/store/postgres/next-due.js';
import { createPostgresStore, VACUUM_LEASES_EVERY } from '../src/store/postgres/postgres-store.js';
import { PUBLISH_EVENTS, publishParams } from '../src/store/postgres/publish.js';
import { RECORD_ATTEMPTS_FAST, recordParams } from '../src/store/postgres/record-attempt.js';
import { RENEW_LEASES } from '../src/store/postgres/renew-leases.js';
import { COUNT_QUEUED } from '../src/store/postgres/stats.js';
import type { ClaimedDelivery, EventRecord } from '../src/store/records.js';
import { LARGE_BODY_BYTES } from '../src/turn-budget.js';
import { atShare, HELD_UP_BACKLOG, sharesOf } from './helpers/held-up-claim.js';
import {
  closesCycle,
  inTransaction as inTransactionOn,
  untilStoreIsVictim,
  blockedBy as waitForBlocked,
} from './helpers/pg-locks.js';
import { cteScans, nodesOfType, type PlanNode, rowsRead, withPlans } from './helpers/pg-plans.js';
import { PG_URL, requireService } from './helpers/services.js';
import { storeBattery } from './helpers/store-battery.js';
import { endpointOptionsBattery } from './helpers/store-battery-endpoint-options.js';

const pgUp = await requireService('PostgreSQL', PG_URL);

const T0 = Date.UTC(2026, 10, 22, 12);
const APP = `lh_test_${process.pid}`;

const RULES: TransitionRules = { schedule: DEFAULT_SCHEDULE, policy: DEFAULT_DISABLE_POLICY };

describe.runIf(pgUp)('postgres', () => {
  const admin = new pg.Pool({ connectionString: PG_URL, application_name: `${APP}_admin`, max: 2 });
  const schemas = new Set<string>();
  const opened = new Set<SenderStore>();
  const schemaOf = new Map<SenderStore, string>();
  let counter = 0;

  const freshSchema = () => {
    const schema = `lh_test_${process.pid}_${counter++}`;
    schemas.add(schema);
    return schema;
  };
  const open = (schema: string, poolSize = 4) => {
    const store = createPostgresStore({ connectionString: PG_URL, schema, poolSize, applicationName: APP });
    opened.add(store);
    schemaOf.set(store, schema);
    return store;
  };
  const dropSchema = async (schema: string) => {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    schemas.delete(schema);
  };
  const connectionsLeft = async () =>
    (
      await admin.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
        [APP],
      )
    ).rows[0]!.n;

  afterEach(async ({ task }) => {
    const left = await connectionsLeft();
    // Clean up whatever the test leaked, so the next test is judged on its own.
    for (const store of opened) await store.close();
    opened.clear();
    // A test that already failed skipped its own close(): its leak is not news.
    if (task.result?.state === 'fail') return;
    expect(left, 'connections this test left open (a store not closed?)').toBe(0);
  });
  afterAll(async () => {
    for (const schema of [...schemas]) await dropSchema(schema);
    await admin.end();
  });

  storeBattery(
    'postgres',
    async () => open(freshSchema()),
    async (store) => {
      await store.close();
      opened.delete(store);
      await dropSchema(schemaOf.get(store)!);
    },
    { idsInSql: true },
  );
  endpointOptionsBattery(
    'postgres',
    async () => open(freshSchema()),
    async (store) => {
      await store.close();
      opened.delete(store);
      await dropSchema(schemaOf.get(store)!);
    },
  );

  it('writes a batch of events and their deliveries all or nothing (design I2)', async () => {
    const { schema, store, accountId } = await storeWithEndpoint();
    const second = await endpointFor(store, accountId);
    // The deliveries insert fails on the second endpoint, after the events were written.
    await admin.query(`
      CREATE FUNCTION "${schema}".refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.endpoint_id = '${second.id}' THEN RAISE EXCEPTION 'crash between two deliveries'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER refuse BEFORE INSERT ON "${schema}".deliveries
        FOR EACH ROW EXECUTE FUNCTION "${schema}".refuse();`);
    const events = [0, 1, 2].map(
      (i): EventRecord => ({
        id: newId('evt', T0 + i),
        accountId,
        name: 'click',
        body: Buffer.from('{"event":"click","timestamp":"2026-11-22T12:00:00Z","data":{}}'),
        createdAt: T0 + i,
      }),
    );
    // Published together: one batch, one statement.
    const results = await Promise.allSettled(events.map((e) => store.publish(e, () => newId('dlv'))));
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    for (const e of events) expect(await store.getEvent(accountId, e.id)).toBeNull();
    expect((await store.listDeliveries(accountId, { limit: 10 })).items).toEqual([]);
    await store.close();
  });

  it('cuts each event of one statement its own bytes out of the bodies sent together', async () => {
    const { schema, store, accountId } = await storeWithEndpoint();
    const padded = Buffer.from('xx{}yy');
    const bodies = [
      Buffer.from('{"event":"click","data":{"city":"Zürich ☃"}}'),
      Buffer.alloc(0),
      Buffer.from([0x7b, 0x00, 0xff, 0xfe, 0x5c, 0x7d]),
      Buffer.from(`{"event":"click","data":{"pad":"${'é'.repeat(40_000)}"}}`),
      // A view into a larger buffer: only its own bytes are the body.
      new Uint8Array(padded.buffer, padded.byteOffset + 2, 2),
    ];
    const batch = bodies.map((body, i) => ({
      event: { id: newId('evt', T0 + i), accountId, name: 'click', body, createdAt: T0 + i } as EventRecord,
      target: {},
    }));
    // The statement itself, once for all five: through the store, a statement that failed would
    // be written again one publish at a time, where every body starts at 1.
    const client = await admin.connect();
    try {
      await client.query(`SET search_path = "${schema}"`);
      const { rows } = await client.query(PUBLISH_EVENTS, publishParams(batch, schema));
      expect(new Set(rows.map((r) => r.inserted_id)).size).toBe(5);
    } finally {
      client.release();
    }
    for (const { event } of batch) {
      const stored = await store.getEvent(accountId, event.id);
      expect(Buffer.from(stored!.body).equals(Buffer.from(event.body))).toBe(true);
    }
    await store.close();
  });

  it("writes a statement again with the next run when a delivery id it makes is taken (another process's, design D66)", async () => {
    const { schema, store, accountId } = await storeWithEndpoint();
    const event = clickEvent(accountId);
    // The run after this one is the next statement's: its first delivery's id, made first elsewhere.
    const run = [...newRun()].reduce((n, digit) => n * 32 + ID_ALPHABET.indexOf(digit), 0) + 1;
    const taken = `dlv_${event.id.slice(4, 14)}${idDigits(run, RUN_DIGITS)}${idDigits(1, COUNT_DIGITS)}`;
    await admin.query(
      `INSERT INTO "${schema}".deliveries (id, event_id, endpoint_id, account_id, event_name, status, created_at, updated_at)
       VALUES ($1, $2, 'ep_elsewhere', $3, 'click', 'delivered', $4, $4)`,
      [taken, newId('evt', T0), accountId, T0],
    );
    const published = await store.publish(event, () => newId('dlv', T0));
    expect(published.deliveries).toHaveLength(1);
    expect(published.deliveries[0]!.id).not.toBe(taken);
    expect(published.deliveries[0]!.id.slice(0, 14)).toBe(taken.slice(0, 14));
    const { rows } = await admin.query(`SELECT id FROM "${schema}".deliveries ORDER BY id`);
    expect(rows.map((r) => r.id)).toEqual([taken, published.deliveries[0]!.id].sort());
    await store.close();
  });

  /** A migrated store in a fresh schema, with an account that has one endpoint. */
  const storeWithEndpoint = async () => {
    const schema = freshSchema();
    const store = open(schema);
    await store.migrate();
    const accountId = newId('acct');
    await endpointFor(store, accountId);
    return { schema, store, accountId };
  };
  const endpointFor = (store: SenderStore, accountId: string) =>
    store.createEndpoint({
      id: newId('ep'),
      accountId,
      url: 'https://receiver.example.com/hook',
      events: ['click'],
      secret: 'whsec_test',
      description: null,
      now: T0,
    });
  const clickEvent = (accountId: string): EventRecord => ({
    id: newId('evt', T0),
    accountId,
    name: 'click',
    body: Buffer.from('{"event":"click","timestamp":"2026-11-22T12:00:00Z","data":{}}'),
    createdAt: T0,
  });
  /** A click of the account's created, and due, at `createdAt`. */
  const clickAt = (accountId: string, createdAt: number): EventRecord => ({
    ...clickEvent(accountId),
    id: newId('evt', createdAt),
    createdAt,
  });
  /** More of the account's due deliveries than a claim of 8 walks, due from T0 on, one a millisecond. */
  const publishBacklog = (store: SenderStore, accountId: string) =>
    Promise.all(
      Array.from({ length: HELD_UP_BACKLOG }, (_, i) =>
        store.publish(clickAt(accountId, T0 + i), () => newId('dlv', T0)),
      ),
    );
  /**
   * A fresh store with two accounts, A with an endpoint and a backlog (publishBacklog), and B with an
   * endpoint and the clicks `bDueAt` (each due then), published in the order given, the backlog at
   * `backlogAt` among them.
   */
  const heldUpStore = async (bDueAt: number[], backlogAt: number) => {
    const schema = freshSchema();
    const store = open(schema);
    await store.migrate();
    const [a, b] = [newId('acct'), newId('acct')];
    await endpointFor(store, a);
    const healthy = await endpointFor(store, b);
    for (const [i, at] of bDueAt.entries()) {
      if (i === backlogAt) await publishBacklog(store, a);
      await store.publish(clickAt(b, at), () => newId('dlv', T0));
    }
    if (backlogAt >= bDueAt.length) await publishBacklog(store, a);
    return { schema, store, a, b, healthy };
  };
  const publishClick = async (store: SenderStore, accountId: string) =>
    (await store.publish(clickEvent(accountId), () => newId('dlv', T0))).deliveries;
  /** A claimed delivery's first attempt, answered 200 at `now`. */
  const succeeded = (c: ClaimedDelivery, now: number): AttemptResult => ({
    lease: { deliveryId: c.delivery.id, leaseToken: c.leaseToken },
    attempt: {
      deliveryId: c.delivery.id,
      number: 1,
      startedAt: T0,
      durationMs: 1,
      statusCode: 200,
      failureKind: null,
      errorMessage: null,
      responseSnippet: null,
      requestHeaders: {},
    },
    rules: RULES,
    now,
  });

  /** Records a failed attempt for a claimed delivery, as the worker would. */
  const fail = (store: SenderStore, c: ClaimedDelivery, now: number) => {
    const number = c.delivery.attempts + 1;
    return store.recordAttempt({
      lease: { deliveryId: c.delivery.id, leaseToken: c.leaseToken },
      attempt: {
        deliveryId: c.delivery.id,
        number,
        startedAt: now,
        durationMs: 5,
        statusCode: 500,
        failureKind: 'http_status',
        errorMessage: '500',
        responseSnippet: null,
        requestHeaders: { 'x-service-attempt': String(number) },
      },
      rules: RULES,
      now,
    });
  };

  it('runs both its pools with generic plans and without JIT, in its schema', async () => {
    const schema = freshSchema();
    const store = connect({ connectionString: PG_URL, schema, poolSize: 1, applicationName: APP });
    const read =
      "SELECT current_setting('jit') AS jit, current_setting('plan_cache_mode') AS plans, current_setting('synchronous_commit') AS commit, current_setting('search_path') AS path";
    const settings = (commit: string) => ({
      jit: 'off',
      plans: 'force_generic_plan',
      commit,
      path: `"${schema}"`,
    });
    try {
      expect((await store.rows(read, []))[0]).toEqual(settings('off'));
      expect((await store.durable('settings_read', read, []))[0]).toEqual(settings('on'));
    } finally {
      await store.end();
    }
  });

  it('refuses a schema name that is not a plain identifier', () => {
    for (const schema of ['Linkhooks', 'a-b', 'x"; DROP SCHEMA public; --', '1abc', '', 'a'.repeat(64)]) {
      expect(() => createPostgresStore({ connectionString: PG_URL, schema })).toThrow(/schema name/);
    }
  });

  it('applies each migration exactly once when two instances migrate a fresh schema at once', async () => {
    const schema = freshSchema();
    const a = open(schema);
    const b = open(schema);
    await Promise.all([a.migrate(), b.migrate()]);
    await a.migrate();
    const applied = await admin.query(
      `SELECT version, count(*)::int AS n FROM "${schema}".schema_migrations GROUP BY version ORDER BY version`,
    );
    expect(applied.rows).toEqual(PG_MIGRATIONS.map((m) => ({ version: m.version, n: 1 })));
    const tables = await admin.query(
      'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
      [schema],
    );
    expect(tables.rows.map((r) => r.table_name)).toEqual([
      'accounts',
      'api_keys',
      'attempts',
      'deleted_accounts',
      'deliveries',
      'endpoint_due',
      'endpoints',
      'endpoints_being_deleted',
      'endpoints_settling',
      'events',
      'leases',
      'operator_notices',
      'portal_tokens',
      'schema_migrations',
    ]);
    await Promise.all([a.close(), b.close()]);
  });

  it('keeps the leases held while it migrates from version 2 to the leases table (migration 3)', async () => {
    // A database as version 2 left it, with one delivery in flight: its lease in the row.
    const schema = freshSchema();
    await inTransaction(schema, async (setup) => {
      await setup.query(`CREATE SCHEMA "${schema}"`);
      await setup.query(
        'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)',
      );
      for (const m of PG_MIGRATIONS.filter((m) => m.version <= 2)) {
        await setup.query(m.sql);
        await setup.query('INSERT INTO schema_migrations VALUES ($1, $2, $3)', [m.version, m.name, T0]);
      }
      await setup.query('COMMIT');
    });
    // Written with version 2's columns: today's statements name columns later versions added.
    const accountId = newId('acct');
    const endpointId = newId('ep');
    const eventId = newId('evt', T0);
    const inFlight = { id: newId('dlv', T0) };
    const waiting = { id: newId('dlv', T0) };
    await admin.query(
      `INSERT INTO "${schema}".endpoints (id, account_id, url, events, secret, created_at, updated_at)
       VALUES ($1, $2, 'https://receiver.example.com/hook', '["click"]', 'whsec_test', $3, $3)`,
      [endpointId, accountId, T0],
    );
    await admin.query(
      `INSERT INTO "${schema}".events (id, account_id, name, body, created_at) VALUES ($1, $2, 'click', $3, $4)`,
      [eventId, accountId, Buffer.from('{"event":"click","timestamp":"2026-11-22T12:00:00Z","data":{}}'), T0],
    );
    for (const [d, lease] of [
      [inFlight, ['token-v2', T0 + 60_000]],
      [waiting, [null, null]],
    ] as const) {
      await admin.query(
        `INSERT INTO "${schema}".deliveries (id, event_id, endpoint_id, account_id, event_name, status,
           next_attempt_at, lease_token, lease_expires_at, created_at, updated_at)
         VALUES ($1, $2, $3, $4, 'click', 'pending', $5, $6, $7, $5, $5)`,
        [d.id, eventId, endpointId, accountId, T0, lease[0], lease[1]],
      );
    }
    const store = open(schema);

    await store.migrate();

    const columns = await admin.query(
      `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'deliveries' AND column_name LIKE 'lease%'`,
      [schema],
    );
    // The lease moved to its own table (migration 3) and nothing of it is left in the row (migration 15).
    expect(columns.rows).toEqual([]);
    // The lease still holds: only the other delivery is handed out...
    const claimed = await store.claimDue({ now: T0, limit: 10, leaseMs: 60_000, perEndpointCap: 10 });
    expect(claimed.map((c) => c.delivery.id)).toEqual([waiting!.id]);
    // ...and the worker that held it before the migration records its attempt with its token.
    const { delivery } = (await store.getDelivery(accountId, inFlight!.id))!;
    const held = { ...claimed[0]!, delivery, leaseToken: 'token-v2', leaseExpiresAt: T0 + 60_000 };
    expect(await fail(store, { ...held, leaseToken: 'not-the-token' }, T0 + 1)).toEqual({ applied: false });
    expect(await fail(store, held, T0 + 1)).toMatchObject({ applied: true, status: 'awaiting_retry' });
    const leases = await admin.query(`SELECT delivery_id FROM "${schema}".leases`);
    expect(leases.rows).toEqual([{ delivery_id: waiting!.id }]);
    await store.close();
  });

  it('hands each of 200 due deliveries to exactly one of 4 concurrent claimers', async () => {
    const schema = freshSchema();
    const claimers = [open(schema), open(schema), open(schema), open(schema)];
    const seeder = claimers[0]!;
    await seeder.migrate();
    const accountId = newId('acct');
    for (let i = 0; i < 4; i++) await endpointFor(seeder, accountId);
    for (let i = 0; i < 50; i++) await publishClick(seeder, accountId);
    expect((await seeder.stats()).queued.pending).toBe(200);

    // A claim can come back with fewer than it could, even none, when another claimer leases the
    // rows it chose as it runs (claim-due.ts): each claimer goes on until every delivery is leased
    // (a bounded number of claims, so a lost delivery fails the count below rather than hanging).
    let taken = 0;
    const inFlight: { claimer: number; start: number; end: number }[] = [];
    const claimAll = async (store: SenderStore, claimer: number) => {
      const mine: ClaimedDelivery[] = [];
      for (let claims = 0; taken < 200 && claims < 500; claims++) {
        const start = performance.now();
        const batch = await store.claimDue({ now: T0, limit: 7, leaseMs: 60_000, perEndpointCap: 1000 });
        inFlight.push({ claimer, start, end: performance.now() });
        mine.push(...batch);
        taken += batch.length;
      }
      return mine;
    };
    // Every claimer connected and its statement prepared first, so that they all claim at once.
    for (const c of claimers) {
      expect(await c.claimDue({ now: T0 - 1, limit: 7, leaseMs: 60_000, perEndpointCap: 1000 })).toEqual([]);
    }
    const started = performance.now();
    const perClaimer = await Promise.all(claimers.map((c, k) => claimAll(c, k)));
    const elapsed = performance.now() - started;
    const all = perClaimer.flat();

    // The claims raced: claims of different claimers were in the database at the same time. (Which
    // claimer wins the rows is up to the database: on a loaded machine one can take all 200.)
    const raced = inFlight.some((a) =>
      inFlight.some((b) => a.claimer !== b.claimer && a.start < b.end && b.start < a.end),
    );
    expect(raced).toBe(true);
    expect(all).toHaveLength(200);
    expect(new Set(all.map((c) => c.delivery.id)).size).toBe(200);
    // The token each claimer was handed is the one the row holds: nobody else's claim overwrote it.
    const leased = await admin.query<{ id: string; token: string }>(
      `SELECT delivery_id AS id, token FROM "${schema}".leases`,
    );
    expect(Object.fromEntries(leased.rows.map((r) => [r.id, r.token]))).toEqual(
      Object.fromEntries(all.map((c) => [c.delivery.id, c.leaseToken])),
    );
    console.info(
      `4 claimers took ${perClaimer.map((m) => m.length).join(' + ')} deliveries in ${elapsed.toFixed(0)} ms`,
    );
    expect(
      await claimers[1]!.claimDue({ now: T0, limit: 10, leaseMs: 60_000, perEndpointCap: 1000 }),
    ).toEqual([]);
    await Promise.all(claimers.map((c) => c.close()));
  });

  /**
   * Twenty due deliveries of one account (five clicks to four endpoints), claimed with
   * `request(accountId)` while another claimer's statement holds the first 7 due rows (design I6).
   * Resolves with what the claim took, none of the held rows among it.
   */
  const claimBesideHeldRows = async (
    request: (accountId: string) => Parameters<SenderStore['claimDue']>[0],
  ) => {
    const schema = freshSchema();
    const store = open(schema);
    await store.migrate();
    const accountId = newId('acct');
    for (let i = 0; i < 4; i++) await endpointFor(store, accountId);
    for (let i = 0; i < 5; i++) await publishClick(store, accountId);
    try {
      return await inTransaction(schema, async (other) => {
        const held = await other.query<{ id: string }>(
          'SELECT id FROM deliveries ORDER BY next_attempt_at, id LIMIT 7 FOR NO KEY UPDATE',
        );
        const mine = await store.claimDue(request(accountId));
        const heldIds = new Set(held.rows.map((r) => r.id));
        expect(mine.filter((c) => heldIds.has(c.delivery.id))).toEqual([]);
        return mine;
      });
    } finally {
      await store.close();
    }
  };

  it('passes over the rows another claimer holds for the next ones, neither waiting nor coming back empty', async () => {
    // A claim with the LIMIT before the skip would take nothing, one without SKIP LOCKED would wait.
    const mine = await claimBesideHeldRows(() => ({
      now: T0,
      limit: 7,
      leaseMs: 60_000,
      perEndpointCap: 1000,
    }));
    expect(mine).toHaveLength(7);
  });

  it('passes over the rows another claimer holds for the same account’s next ones, within its share (design D25)', async () => {
    // This claimer holds 4 of the account's deliveries and may hold 8: 4 more. The rows the other
    // claimer holds do not count against this claimer's share, so it takes the account's next 4
    // (ranked among the rows it could lock).
    const mine = await claimBesideHeldRows((accountId) => ({
      now: T0,
      limit: 7,
      leaseMs: 60_000,
      perEndpointCap: 1000,
      shares: sharesOf(8, 1000, [[accountId, 4]]),
    }));
    expect(mine).toHaveLength(4);
  });

  it('vacuums the leases table as leases end, so claims never read through a pile of dead ones', async () => {
    const schema = freshSchema();
    const store = open(schema);
    await store.migrate();
    const accountId = newId('acct');
    await endpointFor(store, accountId);
    const ending = 2 * VACUUM_LEASES_EVERY + VACUUM_LEASES_EVERY / 2;
    for (let i = 0; i < ending; i++) await publishClick(store, accountId);
    const succeed = (c: ClaimedDelivery) => store.recordAttempt(succeeded(c, T0 + 1));
    for (;;) {
      const batch = await store.claimDue({ now: T0, limit: 100, leaseMs: 60_000, perEndpointCap: 10_000 });
      if (batch.length === 0) break;
      expect((await Promise.all(batch.map(succeed))).every((a) => a.applied)).toBe(true);
    }
    await store.close(); // waits for a vacuum in progress
    const { rows } = await admin.query(
      `SELECT vacuum_count, n_live_tup FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'leases'`,
      [schema],
    );
    // 2,500 leases ended: a vacuum after the first thousand and one after the second.
    expect(Number(rows[0].vacuum_count)).toBeGreaterThanOrEqual(2);
    expect((await admin.query(`SELECT count(*)::int AS n FROM "${schema}".leases`)).rows[0].n).toBe(0);
    // No vacuum, its own or autovacuum, waits for an exclusive lock to shorten the table.
    const options = await admin.query(
      `SELECT c.reloptions FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relname = 'leases'`,
      [schema],
    );
    expect(options.rows[0].reloptions).toEqual(['vacuum_truncate=false']);
  });

  it('counts concurrent final failures of one endpoint from 4 instances without losing one (design I5)', async () => {
    const schema = freshSchema();
    const workers = [open(schema), open(schema), open(schema), open(schema)];
    const first = workers[0]!;
    await first.migrate();
    const accountId = newId('acct');
    const ep = await endpointFor(first, accountId);
    for (let i = 0; i < 10; i++) await publishClick(first, accountId);
    const waiting = await publishClick(first, accountId); // due later: held when the endpoint is disabled
    await first.retryNow(accountId, waiting[0]!.id, T0 + 10 ** 12);
    const claimAt = (now: number) =>
      first.claimDue({ now, limit: 100, leaseMs: 60_000, perEndpointCap: 100 });
    for (let n = 1; n <= 5; n++) {
      const now = T0 + n * 100_000_000;
      const batch = await claimAt(now);
      expect(batch).toHaveLength(10);
      await Promise.all(batch.map((c, i) => fail(workers[i % 4]!, c, now)));
    }
    expect((await first.getEndpoint(accountId, ep.id))!.consecutiveFailures).toBe(0);

    const now = T0 + 6 * 100_000_000;
    const last = await claimAt(now);
    expect(last.map((c) => c.delivery.attempts)).toEqual(Array(10).fill(5));
    const results = await Promise.all(last.map((c, i) => fail(workers[i % 4]!, c, now)));
    expect(results.every((r) => r.applied && r.status === 'failed')).toBe(true);
    expect(results.filter((r) => r.disabledEndpoint)).toHaveLength(1);
    expect(await first.getEndpoint(accountId, ep.id)).toMatchObject({
      enabled: false,
      consecutiveFailures: 10,
      disabledReason: 'consecutive_failures',
    });
    expect((await first.getDelivery(accountId, waiting[0]!.id))!.delivery.status).toBe('held');
    expect(await first.stats()).toEqual({
      queued: { pending: 0, awaiting_retry: 0, held: 1 },
      disabledEndpoints: 1,
    });
    await Promise.all(workers.map((w) => w.close()));
  });

  const blockedBy = (blocker: pg.PoolClient) => waitForBlocked(admin, blocker, APP);
  const inTransaction = <T>(schema: string, run: (tx: pg.PoolClient) => Promise<T>) =>
    inTransactionOn(admin, schema, run);

  /** The tables the delivery path reads and writes. */
  const LOG_TABLES = ['deliveries', 'leases', 'endpoints', 'events', 'attempts'];
  /** Statistics of those tables, taken now, as autovacuum takes them. */
  const analyzeTables = async (schema: string) => {
    for (const table of LOG_TABLES) await admin.query(`VACUUM ANALYZE "${schema}".${table}`);
  };

  /** A store on a fresh schema with one endpoint and one delivery published to it. */
  const oneDelivery = async () => {
    const schema = freshSchema();
    const store = open(schema);
    await store.migrate();
    const accountId = newId('acct');
    const ep = await endpointFor(store, accountId);
    const [published] = await publishClick(store, accountId);
    const claimAt = (now: number) => store.claimDue({ now, limit: 1, leaseMs: 60_000, perEndpointCap: 1 });
    return { schema, store, accountId, ep, delivery: published!, claimAt };
  };

  /** A store on a fresh schema with two deliveries leased, in id order, and their leases. */
  const twoLeased = async () => {
    const { schema, store, accountId } = await oneDelivery();
    await publishClick(store, accountId);
    const claimed = await store.claimDue({ now: T0, limit: 2, leaseMs: 60_000, perEndpointCap: 2 });
    const [first, second] = [...claimed].sort((a, b) => (a.delivery.id < b.delivery.id ? -1 : 1));
    const held = claimed.map((c) => ({ deliveryId: c.delivery.id, leaseToken: c.leaseToken }));
    return { schema, store, held, first: first!, second: second! };
  };

  /**
   * Claims a delivery, sets its endpoint to `before` (when given), then records the attempt's
   * failure while another transaction, not yet committed, changes the endpoint to `change` (as a
   * disabling or a re-enabling does: the endpoint and its pending deliveries together).
   */
  const recordDuring = async (
    change: { enabled: boolean; status: string },
    before?: { enabled: boolean; status: string },
  ) => {
    const { schema, store, accountId, ep, delivery, claimAt } = await oneDelivery();
    const [c] = await claimAt(T0);
    const set = async (db: pg.Pool | pg.PoolClient, to: { enabled: boolean; status: string }) => {
      await db.query(`UPDATE "${schema}".endpoints SET enabled = $2 WHERE id = $1`, [ep.id, to.enabled]);
      await db.query(`UPDATE "${schema}".deliveries SET status = $2 WHERE id = $1`, [delivery.id, to.status]);
    };
    if (before) await set(admin, before);
    const result = await inTransaction(schema, async (other) => {
      await set(other, change);
      const recording = fail(store, c!, T0 + 1);
      await blockedBy(other);
      await other.query('COMMIT');
      return recording;
    });
    const after = (await store.getDelivery(accountId, delivery.id))!.delivery;
    const held = (await store.stats()).queued.held;
    await store.close();
    return { result, after, held };
  };

  it('does not hold a delivery again whose endpoint was re-enabled while its attempt was recorded', async () => {
    // Another delivery's attempt disabled the endpoint and held this one, whose request is out; a
    // re-enabling resumes it and, before it commits, the attempt's failure is being recorded.
    const { result, after } = await recordDuring(
      { enabled: true, status: 'pending' },
      { enabled: false, status: 'held' },
    );
    expect(result).toMatchObject({ applied: true, status: 'awaiting_retry' });
    expect(after).toMatchObject({ status: 'awaiting_retry', attempts: 1, nextAttemptAt: T0 + 1 + 60_000 });
  });

  it('holds a delivery whose endpoint was disabled while its attempt was recorded', async () => {
    // Another delivery's 10th failure disables the endpoint and holds this one, whose request is
    // out; before it commits, this attempt's failure is being recorded.
    const { result, after, held } = await recordDuring({ enabled: false, status: 'held' });
    expect(result).toMatchObject({ applied: true, status: 'held' });
    expect(after).toMatchObject({ status: 'held', attempts: 1 });
    expect(held).toBe(1);
  });

  it('renews leases without deadlocking against a claim taking one of them over', async () => {
    const { schema, store, held, first, second } = await twoLeased();
    // The renewal runs as its own statement here, not through the store: the store runs a
    // deadlock victim again (tested below), which would hide a lock order that deadlocks.
    const renewer = new pg.Client({ connectionString: PG_URL, application_name: APP });
    await renewer.connect();
    try {
      await renewer.query(`SET search_path = "${schema}"`);
      // A claim (its snapshot taken before the renewal) holds both deliveries, and has taken the
      // second one's lease over, when the renewal comes in.
      await inTransaction(schema, async (claim) => {
        await claim.query('SELECT id FROM deliveries WHERE id = ANY ($1) ORDER BY id FOR NO KEY UPDATE', [
          [first.delivery.id, second.delivery.id],
        ]);
        await claim.query(`UPDATE leases SET token = 'taken-over' WHERE delivery_id = $1`, [
          second.delivery.id,
        ]);
        const renewing = renewer.query(RENEW_LEASES, [
          held.map((l) => l.deliveryId),
          held.map((l) => l.leaseToken),
          T0 + 90_000,
        ]);
        await blockedBy(claim);
        // The claim's insert meets the first lease too, still live, and leaves it be (ON CONFLICT
        // locks it all the same): the renewal must not be holding it.
        await claim.query(
          `INSERT INTO leases (delivery_id, endpoint_id, token, expires_at) VALUES ($1, $2, 'mine', 0)
           ON CONFLICT (delivery_id) DO UPDATE SET token = excluded.token WHERE leases.expires_at <= 0`,
          [first.delivery.id, first.delivery.endpointId],
        );
        await claim.query('COMMIT');
        expect((await renewing).rows).toEqual([{ delivery_id: first.delivery.id, token: first.leaseToken }]);
      });
    } finally {
      await renewer.end();
    }
    await store.close();
  });

  it('runs a renewal again when PostgreSQL picks it as a deadlock victim', async () => {
    // A hold of the endpoint's deliveries (as a disabling or a pause makes) in the other order: it
    // has the second delivery when the renewal, holding the first, waits for it; then it reaches
    // for the first. The renewal waited first, so its deadlock check runs first and it is the
    // victim; run again, it waits for the hold's commit and renews both.
    await untilStoreIsVictim(async () => {
      const { schema, store, held, first, second } = await twoLeased();
      try {
        return await inTransaction(schema, async (hold) => {
          await hold.query('SELECT 1 FROM deliveries WHERE id = $1 FOR NO KEY UPDATE', [second.delivery.id]);
          const renewing = store.renewLeases(held, T0 + 90_000);
          await blockedBy(hold);
          const closed = await closesCycle(
            hold.query(`UPDATE deliveries SET status = 'held' WHERE id = $1`, [first.delivery.id]),
          );
          await hold.query('ROLLBACK');
          const renewed = await renewing;
          if (!closed) return false;
          expect(renewed.map((l) => l.deliveryId).sort()).toEqual([first.delivery.id, second.delivery.id]);
          return true;
        });
      } finally {
        await store.close();
      }
    });
  });

  it('runs an endpoint deletion again when PostgreSQL picks it as a deadlock victim', async () => {
    // Another transaction holds the delivery row, then wants the endpoint row the deletion holds:
    // a lock cycle. The deletion waited first, so its deadlock check runs first and aborts it.
    await untilStoreIsVictim(async () => {
      const { schema, store, accountId, ep, delivery } = await oneDelivery();
      try {
        const closed = await inTransaction(schema, async (other) => {
          await other.query('SELECT 1 FROM deliveries WHERE id = $1 FOR UPDATE', [delivery.id]);
          const deleting = store.deleteEndpoint(accountId, ep.id);
          await blockedBy(other);
          const closed = await closesCycle(
            other.query('SELECT 1 FROM endpoints WHERE id = $1 FOR UPDATE', [ep.id]),
          );
          await other.query(closed ? 'COMMIT' : 'ROLLBACK');
          expect(await deleting).toBe(true);
          return closed;
        });
        if (!closed) return false;
        expect(await store.getEndpoint(accountId, ep.id)).toBeNull();
        expect(await store.getDelivery(accountId, delivery.id)).toBeNull();
        return true;
      } finally {
        await store.close();
      }
    });
  });

  /** How many rows of `table` belong to the endpoint (deliveries, attempts and leases name it). */
  const rowsOfEndpoint = async (schema: string, table: string, endpointId: string) =>
    (
      await admin.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "${schema}".${table} WHERE endpoint_id = $1`,
        [endpointId],
      )
    ).rows[0]!.n;
  const logRowsOf = async (schema: string, endpointId: string) => ({
    deliveries: await rowsOfEndpoint(schema, 'deliveries', endpointId),
    attempts: await rowsOfEndpoint(schema, 'attempts', endpointId),
    leases: await rowsOfEndpoint(schema, 'leases', endpointId),
  });

  it('deletes an endpoint with its deliveries, attempts and leases, and prunes a delivery with its attempts, no foreign key cascading (migration 20)', async () => {
    const schema = freshSchema();
    const store = open(schema);
    await store.migrate();
    const accountId = newId('acct');
    const doomed = await endpointFor(store, accountId);
    const kept = await endpointFor(store, accountId);
    for (let i = 0; i < 3; i++) await publishClick(store, accountId);
    const claimed = await store.claimDue({ now: T0, limit: 10, leaseMs: 60_000, perEndpointCap: 10 });
    expect(claimed).toHaveLength(6);
    // Of each endpoint's three: one delivered, one failed once (a retry waits), one in flight.
    for (const ep of [doomed, kept]) {
      const [delivered, failed] = claimed.filter((c) => c.delivery.endpointId === ep.id);
      await store.recordAttempt(succeeded(delivered!, T0 + 1));
      await fail(store, failed!, T0 + 1);
    }
    expect(await logRowsOf(schema, doomed.id)).toEqual({ deliveries: 3, attempts: 2, leases: 1 });
    expect(await store.deleteEndpoint(accountId, doomed.id)).toBe(true);
    expect(await logRowsOf(schema, doomed.id)).toEqual({ deliveries: 0, attempts: 0, leases: 0 });
    expect(await logRowsOf(schema, kept.id)).toEqual({ deliveries: 3, attempts: 2, leases: 1 });
    expect(await store.pruneBefore(T0 + 2)).toBe(1);
    expect(await logRowsOf(schema, kept.id)).toEqual({ deliveries: 2, attempts: 1, leases: 1 });
    await store.close();
  });

  /** A store with an endpoint, a click of a body over 64 KiB published to it, and a small one due after it. */
  const largeAndSmall = async () => {
    const { schema, store, accountId } = await storeWithEndpoint();
    const large = { ...clickEvent(accountId), body: Buffer.alloc(LARGE_BODY_BYTES + 1, 0x61) };
    const small = clickAt(accountId, T0 + 1);
    for (const e of [large, small]) await store.publish(e, () => newId('dlv', e.createdAt));
    const request = { now: T0 + 1, limit: 10, leaseMs: 60_000, perEndpointCap: 10 };
    const leases = async () =>
      (await admin.query(`SELECT delivery_id FROM "${schema}".leases`)).rows.map((r) => r.delivery_id);
    return { schema, store, large, small, request, leases };
  };

  it('leaves out of a claim a delivery whose large body was deleted before it was read, and hands out the rest', async () => {
    const { schema, store, large, small, request, leases } = await largeAndSmall();
    // As an account's deletion committing between the claim and the read of its large bodies (its
    // deliveries and their leases first, then its events): set off by the claim's own lease of the
    // large event's delivery, when the claim's statement ends.
    await admin.query(`
      CREATE FUNCTION "${schema}".delete_large_event() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NOT EXISTS (SELECT 1 FROM "${schema}".deliveries WHERE id = NEW.delivery_id AND event_id = '${large.id}')
        THEN RETURN NULL; END IF;
        DELETE FROM "${schema}".leases WHERE delivery_id IN
          (SELECT id FROM "${schema}".deliveries WHERE event_id = '${large.id}');
        DELETE FROM "${schema}".deliveries WHERE event_id = '${large.id}';
        DELETE FROM "${schema}".events WHERE id = '${large.id}';
        RETURN NULL;
      END $$;
      CREATE TRIGGER delete_large_event AFTER INSERT ON "${schema}".leases
      FOR EACH ROW EXECUTE FUNCTION "${schema}".delete_large_event();`);
    const claimed = await store.claimDue(request);
    expect(claimed.map((c) => c.delivery.eventId)).toEqual([small.id]);
    expect(Buffer.from(claimed[0]!.body).equals(small.body)).toBe(true);
    expect(await leases()).toEqual([claimed[0]!.delivery.id]);
    await store.close();
  });

  it('gives a claim’s leases back when its large bodies cannot be read, so its deliveries are claimed again at once', async () => {
    const { schema, store, large, small, request, leases } = await largeAndSmall();
    const pg = connect({ connectionString: PG_URL, schema, poolSize: 1, applicationName: APP });
    const failing: Pg = { ...pg, preparedBinary: () => Promise.reject(new Error('the connection ended')) };
    const settler = createDueSettler(failing);
    await expect(createClaimer(failing, settler).claimDue(request)).rejects.toThrow('the connection ended');
    expect(await leases()).toEqual([]);
    const again = await store.claimDue(request);
    expect(again.map((c) => c.delivery.eventId)).toEqual([large.id, small.id]);
    expect(Buffer.from(again[0]!.body).equals(large.body)).toBe(true);
    await settler.stop();
    await pg.end();
    await store.close();
  });

  it('leaves no delivery behind of an endpoint deleted while a publish holding it commits', async () => {
    const { schema, store, accountId, ep } = await oneDelivery();
    await inTransaction(schema, async (publish) => {
      // As PUBLISH_EVENTS does: the endpoint share-locked, an event and its delivery inserted.
      const event = clickEvent(accountId);
      await publish.query('SELECT 1 FROM endpoints WHERE id = $1 FOR SHARE', [ep.id]);
      await publish.query(
        `INSERT INTO events (id, account_id, name, body, created_at) VALUES ($1, $2, 'click', $3, $4)`,
        [event.id, accountId, event.body, T0],
      );
      await publish.query(
        `INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, next_attempt_at,
                                 created_at, updated_at)
         VALUES ($1, $2, $3, $4, 'click', 'pending', $5, $5, $5)`,
        [newId('dlv', T0), event.id, ep.id, accountId, T0],
      );
      const deleting = store.deleteEndpoint(accountId, ep.id);
      await blockedBy(publish);
      await publish.query('COMMIT');
      expect(await deleting).toBe(true);
    });
    expect(await logRowsOf(schema, ep.id)).toEqual({ deliveries: 0, attempts: 0, leases: 0 });
    await store.close();
  });

  it('leaves no attempt behind of a delivery deleted while its attempt is recorded, with its endpoint or its account', async () => {
    const { schema, store, accountId, ep, delivery, claimAt } = await oneDelivery();
    const account = await store.createAccount({
      id: newId('acct'),
      name: 'Acme',
      plan: 'business',
      ...(({ hash, id, prefix }) => ({ apiKeyHash: hash, apiKeyId: id, apiKeyPrefix: prefix }))(
        newApiKey(T0).key,
      ),
      now: T0,
    });
    const other = await endpointFor(store, account.id);
    const [otherDelivery] = await publishClick(store, account.id);
    await claimAt(T0);
    await claimAt(T0);
    expect(await store.markAccountDeleted(account.id, T0)).toBe(true);
    // As a record does: the delivery locked, its attempt inserted; the deletion waits for it.
    const recordedDuring = (d: { id: string; endpointId: string }, deleting: () => Promise<unknown>) =>
      inTransaction(schema, async (record) => {
        await record.query('SELECT 1 FROM deliveries WHERE id = $1 FOR UPDATE', [d.id]);
        await record.query(
          `INSERT INTO attempts (delivery_id, number, started_at, duration_ms, request_headers, endpoint_id)
           VALUES ($1, 1, $2, 5, '{}', $3)`,
          [d.id, T0, d.endpointId],
        );
        const deleted = deleting();
        await blockedBy(record);
        await record.query('COMMIT');
        return deleted;
      });
    expect(await recordedDuring(delivery, () => store.deleteEndpoint(accountId, ep.id))).toBe(true);
    expect(await logRowsOf(schema, ep.id)).toEqual({ deliveries: 0, attempts: 0, leases: 0 });
    expect(await recordedDuring(otherDelivery!, () => store.deleteAccountStep(account.id, 10))).toBe(1);
    expect(await logRowsOf(schema, other.id)).toEqual({ deliveries: 0, attempts: 0, leases: 0 });
    await store.close();
  });

  it('leases with the walk alone what the whole claim would, and nothing when the walk is held up, which the whole claim then reads past (design D25)', async () => {
    // One of B's due first, then more of A's than a claim of 8 walks, then B's second.
    const { schema, store, a, healthy } = await heldUpStore([T0 - 1, T0 + HELD_UP_BACKLOG], 1);
    const request = { now: T0 + HELD_UP_BACKLOG + 1, limit: 8, leaseMs: 60_000, perEndpointCap: 8 };
    const leases = async () =>
      (await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".leases`)).rows[0]!.n;
    const walk = (params: unknown[]) =>
      inTransaction(schema, async (tx) => {
        const { rows } = await tx.query(CLAIM_WALK, params.slice(0, WALK_PARAMS));
        await tx.query('COMMIT');
        return rows;
      });
    // A's account at the claimer's share: the walk finds B's first alone, is held up, and leases
    // nothing; the whole claim takes B's first and, reading past the walk, B's second.
    const heldUp = claimParams({ ...request, shares: atShare(a) });
    expect(await walk(heldUp)).toEqual([expect.objectContaining({ id: null, held_up: true })]);
    expect(await leases()).toBe(0);
    const past = await store.claimDue({ ...request, shares: atShare(a) });
    expect(past.map((c) => c.delivery.endpointId)).toEqual([healthy.id, healthy.id]);
    // Nothing holds A back: the walk alone leases A's first 8.
    const leased = await walk(claimParams(request));
    expect(leased.map((row) => [row.account_id, row.held_up])).toEqual(Array(8).fill([a, false]));
    expect(await leases()).toBe(10);
    await store.close();
  });

  it('after a claim held up, claims with the whole statement alone until it says the walk is clear, then with the walk first again', async () => {
    // A's backlog, then two of B's due after it.
    const { schema, store, a, b } = await heldUpStore([T0 + HELD_UP_BACKLOG, T0 + HELD_UP_BACKLOG + 1], 0);
    const pg = connect({ connectionString: PG_URL, schema, poolSize: 1, applicationName: APP });
    const ran: string[] = [];
    const recording: Pg = {
      ...pg,
      prepared: (name, text, values) => {
        ran.push(name);
        return pg.prepared(name, text, values);
      },
    };
    const settler = createDueSettler(recording);
    const claim = createClaimer(recording, settler).claimDue;
    const request = { now: T0 + HELD_UP_BACKLOG + 2, limit: 1, leaseMs: 60_000, perEndpointCap: 8 };
    const statements = async (r: ClaimRequest) => {
      ran.length = 0;
      const claimed = await claim(r);
      return { accounts: claimed.map((c) => c.delivery.accountId), ran: [...ran] };
    };
    // A's account at the claimer's share: held up, and held up again.
    expect(await statements({ ...request, shares: atShare(a) })).toEqual({
      accounts: [b],
      ran: ['claim_walk', 'claim_due'],
    });
    expect(await statements({ ...request, shares: atShare(a) })).toEqual({
      accounts: [b],
      ran: ['claim_due'],
    });
    // Nothing holds A back: the whole statement says the walk is clear, and the next walks alone.
    expect(await statements(request)).toEqual({ accounts: [a], ran: ['claim_due'] });
    expect(await statements(request)).toEqual({ accounts: [a], ran: ['claim_walk'] });
    await settler.stop();
    await pg.end();
    await store.close();
  });

  it('gives a delivery back at once when its attempt number was recorded already (design I4)', async () => {
    const { store, delivery, claimAt } = await oneDelivery();
    const [first] = await claimAt(T0);
    await fail(store, first!, T0);
    const [second] = await claimAt(T0 + 60_000);
    // The second lease's attempt carries a number recorded already: nothing is written and the
    // lease ends, so the delivery is claimable again now, not in 60 s.
    const duplicate = { ...second!, delivery: { ...second!.delivery, attempts: 0 } };
    expect(await fail(store, duplicate, T0 + 60_000)).toEqual({ applied: false });
    expect(await store.nextDueAt()).toBe(T0 + 60_000);
    const [again] = await claimAt(T0 + 60_001);
    expect(again!.delivery).toMatchObject({ id: delivery.id, attempts: 1 });
    await store.close();
  });

  // Statistics as autovacuum may have left them: none yet (a new database, its first minute),
  // taken over the backlog itself, or while the queue was empty (the usual state of a queue), the
  // backlog arriving after.
  for (const analyzed of [
    'no statistics yet',
    'statistics of the backlog',
    'statistics of an empty queue',
  ] as const) {
    it(`reads a window of the due deliveries per claim, and the leases for the next due time, not the backlog (${analyzed})`, async () => {
      const schema = freshSchema();
      const store = open(schema);
      await store.migrate();
      const accountId = newId('acct');
      for (let i = 0; i < 8; i++) await endpointFor(store, accountId);
      const [first] = await publishClick(store, accountId);
      const analyze = () => analyzeTables(schema);
      // 16,000 deliveries spread over the 8 endpoints: delivered ones when the statistics are taken
      // over an empty queue (the table is as large, nothing in it due), due ones after.
      const bulk = (status: string) =>
        admin.query(
          `INSERT INTO "${schema}".deliveries (id, event_id, endpoint_id, account_id, event_name, status, attempts,
                                               next_attempt_at, created_at, updated_at)
           SELECT 'dlv_' || $4 || lpad(i::text, 6, '0') || substr(e.id, 4), $1, e.id, $2, 'click', $4, 0,
                  $3::bigint, $3::bigint, $3::bigint
           FROM "${schema}".endpoints e, generate_series(1, 2000) AS i`,
          [first!.eventId, accountId, T0, status],
        );
      if (analyzed === 'statistics of an empty queue') {
        await bulk('delivered');
        await store.claimDue({ now: T0, limit: 32, leaseMs: 60_000, perEndpointCap: 8 });
        await analyze();
        await bulk('pending');
      } else {
        await bulk('pending');
        if (analyzed === 'statistics of the backlog') await analyze();
      }
      // 32 deliveries in flight: their leases are what the next due time reads.
      expect(await store.claimDue({ now: T0, limit: 32, leaseMs: 60_000, perEndpointCap: 8 })).toHaveLength(
        32,
      );
      await withPlans(admin, schema, async (plan) => {
        // The store prepares these once per connection and runs their generic plan (plan_cache_mode):
        // a plan that joined the picked ids to every due row, or walked the due-time index filtering
        // by id, made each claim read the whole backlog. The parameters are claimDue's own.
        const params = claimParams({
          now: T0,
          limit: 32,
          leaseMs: 60_000,
          perEndpointCap: 8,
          shares: sharesOf(32, 32),
        });
        for (const claim of [
          await plan(CLAIM_DUE, params),
          await plan(CLAIM_WALK, params.slice(0, WALK_PARAMS)),
        ]) {
          expect(rowsRead(claim, 'deliveries')).toBeGreaterThan(0);
          expect(rowsRead(claim, 'deliveries')).toBeLessThan(1_000); // the window is 128 rows; the backlog 16,000
        }
        const nextDue = await plan(NEXT_DUE, []);
        expect(rowsRead(nextDue, 'deliveries')).toBeGreaterThan(0);
        expect(rowsRead(nextDue, 'deliveries')).toBeLessThan(1_000);
      });
      await store.close();
    });
  }

  // With no statistics yet (autovacuum kept off these tables, so none arrive during the test) and
  // with statistics taken: each state made a different one of the statements rescan a part.
  for (const analyzed of [false, true]) {
    it(`publishes a batch of events and records a batch of attempts without reading one part of the statement again for each row of another (${analyzed ? 'statistics taken' : 'no statistics yet'})`, async () => {
      const schema = freshSchema();
      const store = open(schema);
      await store.migrate();
      for (const table of LOG_TABLES) {
        await admin.query(`ALTER TABLE "${schema}".${table} SET (autovacuum_enabled = false)`);
      }
      const accountId = newId('acct');
      for (let i = 0; i < 8; i++) await endpointFor(store, accountId);
      for (let i = 0; i < 8; i++) await publishClick(store, accountId);
      const claimed = await store.claimDue({ now: T0, limit: 64, leaseMs: 60_000, perEndpointCap: 64 });
      expect(claimed).toHaveLength(64);
      // A part read again for each row of another makes the statement's work grow with the square
      // of the batch. Planned generically, the statement guesses ten rows for each part, and a
      // nested loop is then what it picks.
      const readOnce = (plan: PlanNode) => {
        expect(cteScans(plan).length).toBeGreaterThan(0);
        expect(cteScans(plan).filter((s) => s.loops > 1)).toEqual([]);
      };
      if (analyzed) await analyzeTables(schema);
      await withPlans(admin, schema, async (plan) => {
        // The parameters the store sends for a batch of successes, each claimed delivery's first.
        const record = await plan(
          RECORD_ATTEMPTS_FAST,
          recordParams(claimed.map((c) => succeeded(c, T0))).params,
        );
        expect(record['Actual Rows']).toBe(64); // every attempt applied
        readOnce(record);
        // A heartbeat renewing every lease in flight.
        const renew = await plan(RENEW_LEASES, [
          claimed.map((c) => c.delivery.id),
          claimed.map((c) => c.leaseToken),
          T0 + 120_000,
        ]);
        expect(renew['Actual Rows']).toBe(64); // every lease renewed
        readOnce(renew);
        // The parameters the store sends for 32 clicks, each to the account's 8 endpoints.
        const events = Array.from({ length: 32 }, () => ({ event: clickEvent(accountId), target: {} }));
        const publish = await plan(PUBLISH_EVENTS, publishParams(events, schema));
        expect(publish['Actual Rows']).toBe(32 * 8); // a row per delivery made
        readOnce(publish);
      });
      await store.close();
    });
  }

  it('claims with a per-endpoint cap far above its batch, locking no more rows than the batch can use', async () => {
    const schema = freshSchema();
    const store = open(schema);
    await store.migrate();
    const accountId = newId('acct');
    for (let i = 0; i < 4; i++) await endpointFor(store, accountId);
    // 1,600 deliveries due on four endpoints, published together.
    await Promise.all(Array.from({ length: 400 }, () => publishClick(store, accountId)));
    const request = { now: T0, limit: 8, leaseMs: 60_000, perEndpointCap: 1_000 };
    await withPlans(admin, schema, async (plan) => {
      const claim = await plan(CLAIM_DUE, claimParams(request));
      expect(claim['Actual Rows']).toBe(8);
      // The window is the batch's, whatever the cap: sized by the cap, this claim locked all 1,600
      // rows to take 8, and compared each one with every candidate.
      expect(nodesOfType(claim, 'LockRows').map((n) => n['Actual Rows'])).toEqual([claimWindow(8)]);
      const parts = ['locked', 'ranked', 'picked', 'leased', 'within_endpoint'];
      expect(cteScans(claim).filter((s) => parts.includes(s.part) && s.loops > 1)).toEqual([]);
    });
    const claimed = await store.claimDue(request);
    expect(claimed).toHaveLength(8);
    expect(new Set(claimed.map((c) => c.leaseToken)).size).toBe(8);
    await store.close();
  });

  it('counts queued deliveries for the metrics from their partial index, not the log', async () => {
    const schema = freshSchema();
    const store = open(schema);
    await store.migrate();
    const accountId = newId('acct');
    await endpointFor(store, accountId);
    const [first] = await publishClick(store, accountId);
    // 20,000 delivered deliveries beside the one queued.
    await admin.query(
      `INSERT INTO "${schema}".deliveries (id, event_id, endpoint_id, account_id, event_name, status, attempts,
                                           created_at, updated_at)
       SELECT 'dlv_done' || lpad(i::text, 6, '0'), $1, $2, $3, 'click', 'delivered', 1, $4::bigint, $4::bigint
       FROM generate_series(1, 20000) AS i`,
      [first!.eventId, first!.endpointId, accountId, T0],
    );
    await admin.query(`VACUUM ANALYZE "${schema}".deliveries`);
    await withPlans(admin, schema, async (plan) => {
      const counted = await plan(COUNT_QUEUED, []);
      expect(JSON.stringify(counted)).toContain('"Index Name":"deliveries_queued_by_endpoint"');
      expect(rowsRead(counted, 'deliveries')).toBe(1);
    });
    await store.close();
  });

  it('wakes a subscriber on one instance when another instance publishes (LISTEN/NOTIFY)', async () => {
    const schema = freshSchema();
    const listening = open(schema);
    const publisher = open(schema);
    await listening.migrate();

    let calls = 0;
    let waiter: (() => void) | undefined;
    const nextCall = () => new Promise<void>((resolve) => (waiter = resolve));
    const listenerReady = nextCall();
    const unsubscribe = listening.subscribe!(() => {
      calls++;
      const resolve = waiter;
      waiter = undefined;
      resolve?.();
    });
    // The store wakes its subscribers once as soon as LISTEN is in effect (a catch-up for whatever
    // was published before): from here on no notification can be missed.
    await listenerReady;
    expect(calls).toBe(1);

    const woken = nextCall();
    const accountId = newId('acct');
    await endpointFor(publisher, accountId);
    await publishClick(publisher, accountId);
    await woken;
    expect(calls).toBe(2);

    // Notifications carry the schema: another schema's wake-up (sent first, in the same
    // transaction, so it reaches the listener first) must not wake this store.
    const again = nextCall();
    const raw = await admin.connect();
    try {
      await raw.query('BEGIN');
      await raw.query(`SELECT pg_notify('linkhooks_due', $1)`, [`${schema}_other`]);
      await raw.query(`SELECT pg_notify('linkhooks_due', $1)`, [schema]);
      await raw.query('COMMIT');
    } finally {
      raw.release();
    }
    await again;
    expect(calls).toBe(3);

    unsubscribe();
    await Promise.all([listening.close(), publisher.close()]);
  });

  it('re-LISTENs after losing its connection and wakes its subscribers again', async () => {
    const schema = freshSchema();
    const listening = open(schema);
    const publisher = open(schema);
    await listening.migrate();
    let calls = 0;
    let waiter: (() => void) | undefined;
    const nextCall = () => new Promise<void>((resolve) => (waiter = resolve));
    const ready = nextCall();
    const unsubscribe = listening.subscribe!(() => {
      calls++;
      waiter?.();
    });
    await ready;

    const reconnected = nextCall();
    const killed = await admin.query(
      `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
       WHERE application_name = $1 AND query = 'LISTEN linkhooks_due'`,
      [APP],
    );
    expect(killed.rows).toEqual([{ ok: true }]);
    await reconnected; // the catch-up wake once LISTEN is back
    expect(calls).toBe(2);

    const woken = nextCall();
    const accountId = newId('acct');
    await endpointFor(publisher, accountId);
    await publishClick(publisher, accountId);
    await woken;
    expect(calls).toBe(3);
    unsubscribe();
    await Promise.all([listening.close(), publisher.close()]);
  });

  it('close() ends the LISTEN connection of a store that is still subscribed', async () => {
    const store = open(freshSchema());
    await store.migrate();
    const ready = new Promise<void>((resolve) => store.subscribe!(resolve));
    await ready;
    expect(await connectionsLeft()).toBeGreaterThan(0);
    await store.close();
    expect(await connectionsLeft()).toBe(0);
  });

  it('notifies inside the transaction: a publish with no pending delivery sends no wake-up', async () => {
    const schema = freshSchema();
    const store = open(schema);
    await store.migrate();
    const spy = await admin.connect();
    const payloads: string[] = [];
    spy.on('notification', (m) => payloads.push(m.payload ?? ''));
    try {
      await spy.query('LISTEN linkhooks_due');
      const accountId = newId('acct');
      await publishClick(store, accountId); // no endpoint: nothing to deliver, no wake-up
      await endpointFor(store, accountId);
      await publishClick(store, accountId);
      // A query round trip on the spy's own connection: notifications committed before it are
      // delivered to the spy before its result.
      await spy.query('SELECT 1');
      expect(payloads.filter((p) => p === schema)).toEqual([schema]);
    } finally {
      await spy.query('UNLISTEN *');
      spy.release();
    }
    await store.close();
  });
});
