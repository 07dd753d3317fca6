/**
 * The claim's plans. SQLite's reads on a migrated database: the walk follows the due-time index,
 * in its order (no sort, so it stops once it has its window), steps past the deliveries in flight
 * within it, and reads neither the events nor their bodies; what an attempt needs is read for the
 * picked ids by primary key; the endpoints' own due deliveries, read when the walk is held up, come
 * from each endpoint's index. None scans the deliveries, however long the log. PostgreSQL's generic
 * plan, on a log whose front is one tenant's backlog: the same walk, bounded, and each endpoint's
 * own index past it; and the claim's and the record's plans made while the log was young still read
 * by key once it has grown (design D81).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PROBE_ORDER } from '../src/domain/breaker.js';
import { CLAIMABLE_STATUSES } from '../src/domain/delivery-state.js';
import { newId } from '../src/domain/ids.js';
import { claimWalk, claimWindow } from '../src/store/claim-window.js';
import { accountAtOrigin } from '../src/store/pick-due.js';
import {
  CLAIM_DUE,
  CLAIM_IN_TURN,
  CLAIM_WALK,
  claimParams,
  turnParams,
  WALK_PARAMS,
} from '../src/store/postgres/claim-due.js';
import { CLAIM_PROBES } from '../src/store/postgres/claim-probes.js';
import { createPostgresStore } from '../src/store/postgres/postgres-store.js';
import { RECORD_ATTEMPTS_FAST, recordParams } from '../src/store/postgres/record-attempt.js';
import {
  DUE_AFTER_CURSOR,
  DUE_ENDPOINTS,
  DUE_IN_FLIGHT,
  DUE_PAST_WALK,
  FINISHING,
  LEASED,
  SELECT_BODIES,
  SELECT_DUE,
  SELECT_HEADS,
  SELECT_PICKED,
} from '../src/store/sqlite/claim-due.js';
import { SELECT_PROBE } from '../src/store/sqlite/claim-probes.js';
import { EARLIEST_DUE } from '../src/store/sqlite/endpoint-due.js';
import { atShare, sharesOf } from './helpers/held-up-claim.js';
import { indexRead, indexScans, type PlanNode, rowsRead, withPlans } from './helpers/pg-plans.js';
import { pgSchemas } from './helpers/pg-schemas.js';
import { answerResult } from './helpers/record-answer.js';
import { PG_URL, requireService } from './helpers/services.js';
import { withSqlitePlans } from './helpers/sqlite-plans.js';

const dir = mkdtempSync(join(tmpdir(), 'linkhooks-claim-plan-'));
/** No endpoint, account or origin full: the JSON arrays the SQLite statements take. */
const full = { full: '[]', fullAccounts: '[]', fullOrigins: '[]', fullAtOrigins: '[]' };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the SQLite claim', () => {
  it('walks the due index without the events, then reads the picked rows by key, and their events’ bodies once each', async () => {
    await withSqlitePlans(dir, (plan) => {
      // The index alone decides which rows are due and not in flight; only those are read, by rowid.
      const walk = plan(SELECT_DUE, { now: 0, ...full, window: 64, skip: 0, walk: 512 });
      expect(walk).toMatch(/SEARCH deliveries USING COVERING INDEX deliveries_due \(next_attempt_at<\?\)/);
      expect(walk).toMatch(/SEARCH d USING INTEGER PRIMARY KEY \(rowid=\?\)/);
      expect(walk).not.toMatch(/TEMP B-TREE|\bev\b|events/);
      // The pages past the first (duePages) walk the same way, past the rows read before.
      expect(plan(SELECT_DUE, { now: 0, ...full, window: 48, skip: 16, walk: 512 })).toBe(walk);
      expect(plan(DUE_PAST_WALK, { now: 0, walk: 512 })).toMatch(
        /SEARCH deliveries USING COVERING INDEX deliveries_due \(next_attempt_at<\?\)/,
      );
      const heads = plan(SELECT_HEADS, { now: 0, endpoints: '["ep_1"]', perEndpoint: 8, status: 'pending' });
      expect(heads).toMatch(
        /SEARCH h USING (COVERING )?INDEX deliveries_queued_by_endpoint \(endpoint_id=\? AND status=\? AND next_attempt_at<\?\)/,
      );
      expect(heads).toMatch(/SEARCH d USING INDEX sqlite_autoindex_deliveries_1 \(id=\?\)/);
      expect(heads).not.toMatch(/SCAN (d|h)\b/);
      const picked = plan(SELECT_PICKED, { now: 0, ids: '["dlv_1"]' });
      expect(picked).toMatch(/SEARCH d USING INDEX sqlite_autoindex_deliveries_1 \(id=\?\)/);
      expect(picked).toMatch(/SEARCH e USING INDEX sqlite_autoindex_endpoints_1 \(id=\?\)/);
      expect(picked).not.toMatch(/SCAN (d|e)\b|\bev\b|events/);
      // The bodies apart, each event's once, by key.
      const bodies = plan(SELECT_BODIES, { ids: '["evt_1"]' });
      expect(bodies).toMatch(/SEARCH ev USING INDEX sqlite_autoindex_events_1 \(id=\?\)/);
      expect(bodies).not.toMatch(/SCAN ev\b|TEMP B-TREE/);
    });
  });
});

describe('the SQLite claim on a platform’s database', () => {
  it('reads its rows’ endpoints by key, and when held up the endpoints with something due, by due time', async () => {
    // As ANALYZE finds a platform's database: 20,000 endpoints, few with queued deliveries. On it
    // the planner scanned every endpoint unless told the order.
    const stats: [string, string, string][] = [
      ['endpoints', 'sqlite_autoindex_endpoints_1', '20000 1'],
      ['deliveries', 'sqlite_autoindex_deliveries_1', '1000000 1'],
      ['deliveries', 'deliveries_queued_by_endpoint', '2000 40 20 1'],
      ['deliveries', 'deliveries_due', '1500 1 1 1'],
      ['endpoint_due', 'endpoint_due_by_time', '20000 1'],
    ];
    await withSqlitePlans(
      dir,
      (plan) => {
        // The walk too looks its rows' endpoints up by key.
        const walk = plan(SELECT_DUE, { now: 0, ...full, window: 64, skip: 0, walk: 512 });
        expect(walk).toMatch(/SEARCH deliveries USING COVERING INDEX deliveries_due \(next_attempt_at<\?\)/);
        expect(walk).toMatch(/SEARCH d USING INTEGER PRIMARY KEY \(rowid=\?\)/);
        expect(walk).toMatch(/SEARCH e USING INDEX sqlite_autoindex_endpoints_1 \(id=\?\)/);
        expect(walk).not.toMatch(/SCAN e\b|AUTOMATIC|TEMP B-TREE/);
        const due = plan(DUE_ENDPOINTS, { now: 0, ...full, leased: '[]', scan: 512 });
        expect(due).toMatch(/SEARCH q USING (COVERING )?INDEX endpoint_due_by_time \(next_due_at<\?\)/);
        expect(due).toMatch(/SEARCH e USING INDEX sqlite_autoindex_endpoints_1 \(id=\?\)/);
        expect(due).not.toMatch(/SCAN (q|e|d)\b|AUTOMATIC|TEMP B-TREE/);
        // A turn's endpoints after its cursor, in account order from the endpoints' index, each one's
        // entry and row by key (sorting no more than those, by account for their count and for the
        // order taken).
        const after = plan(DUE_AFTER_CURSOR, {
          now: 0,
          ...full,
          leased: '[]',
          scan: 512,
          after: 'acct_a',
          perAccount: 4,
          found: 128,
        });
        expect(after).toMatch(/SEARCH endpoints USING COVERING INDEX endpoints_by_account \(account_id>\?\)/);
        expect(after).toMatch(/SEARCH endpoints USING COVERING INDEX endpoints_by_account \(account_id<\?\)/);
        expect(after).toMatch(/SEARCH q USING INDEX sqlite_autoindex_endpoint_due_1 \(endpoint_id=\?\)/);
        expect(after).toMatch(/SEARCH e USING INDEX sqlite_autoindex_endpoints_1 \(id=\?\)/);
        expect(after).not.toMatch(/SCAN (q|e|endpoints)\b|AUTOMATIC/);
        // The endpoints with a live lease, read once per claim from the leased rows only; left out
        // there and read apart, each one's entry and row by key, and a seek for a due delivery no
        // one holds (sorting no more than are in flight).
        const leased = plan(LEASED, { now: 0 });
        expect(leased).toMatch(
          /SEARCH deliveries USING COVERING INDEX deliveries_leased \(lease_expires_at>\?\)/,
        );
        expect(leased).not.toMatch(/SCAN deliveries\b/);
        // The leases being recorded, each by key.
        const finishing = plan(FINISHING, { now: 0, finishing: '[["dlv_1","t"]]' });
        expect(finishing).toMatch(/SEARCH d USING INDEX sqlite_autoindex_deliveries_1 \(id=\?\)/);
        expect(finishing).not.toMatch(/SCAN d\b/);
        const inFlight = plan(DUE_IN_FLIGHT, { now: 0, ...full, leased: '["ep_1"]', scan: 512 });
        expect(inFlight).toMatch(/SEARCH q USING INDEX sqlite_autoindex_endpoint_due_1 \(endpoint_id=\?\)/);
        expect(inFlight).toMatch(/SEARCH e USING INDEX sqlite_autoindex_endpoints_1 \(id=\?\)/);
        expect(inFlight).not.toMatch(/SCAN (q|e|d|deliveries)\b|AUTOMATIC/);
        // One seek per claimable status, each with its status as a key.
        expect(
          inFlight.match(
            /SEARCH h USING INDEX deliveries_queued_by_endpoint \(endpoint_id=\? AND status=\? AND next_attempt_at<\?\)/g,
          ),
        ).toHaveLength(CLAIMABLE_STATUSES.length);
        // An attempt's look at what its endpoint has left: one seek per claimable status.
        const earliest = plan(EARLIEST_DUE, { endpointId: 'ep_1' });
        expect(
          earliest.match(
            /SEARCH deliveries USING (COVERING )?INDEX deliveries_queued_by_endpoint \(endpoint_id=\? AND status=\? AND next_attempt_at>\?\)/g,
          ),
        ).toHaveLength(2);
        expect(earliest).not.toMatch(/SCAN deliveries|TEMP B-TREE/);
        const heads = plan(SELECT_HEADS, {
          now: 0,
          endpoints: '["ep_1"]',
          perEndpoint: 8,
          status: 'pending',
        });
        expect(heads).toMatch(/SEARCH e USING INDEX sqlite_autoindex_endpoints_1 \(id=\?\)/);
        expect(heads).not.toMatch(/SCAN (d|h|e)\b|AUTOMATIC/);
        // A breaker's probe (design D27): a seek into the endpoint's own index for the status, and
        // its live leases from theirs, however long its backlog.
        const probe = plan(SELECT_PROBE, { now: 0, endpoint: 'ep_1', status: 'awaiting_retry' });
        expect(probe).toMatch(
          /SEARCH d USING (COVERING )?INDEX deliveries_queued_by_endpoint \(endpoint_id=\? AND status=\? AND next_attempt_at<\?\)/,
        );
        expect(probe).toMatch(/SEARCH l USING COVERING INDEX deliveries_leased \(lease_expires_at>\?\)/);
        expect(probe).not.toMatch(/SCAN (d|l|e)\b|AUTOMATIC|TEMP B-TREE/);
      },
      stats,
    );
  });
});

describe('the PostgreSQL claim', async () => {
  const up = await requireService('PostgreSQL', PG_URL);
  const schemas = pgSchemas('lh_claim_plan');
  afterAll(() => (up ? schemas.drop() : schemas.admin.end()));
  const T0 = Date.UTC(2026, 10, 22, 12);
  const IDLE_ENDPOINTS = 2_000;
  /** `run` with a migrated store on a fresh schema, closed after. */
  const withStore = async (
    run: (schema: string, store: ReturnType<typeof createPostgresStore>) => Promise<void>,
  ) => {
    const schema = schemas.fresh();
    const store = createPostgresStore({ connectionString: PG_URL, schema, poolSize: 2 });
    try {
      await store.migrate();
      await run(schema, store);
    } finally {
      await store.close();
    }
  };

  it.runIf(up)(
    'walks the due index to its window, at most claimWalk rows, then the endpoints with something due, each by its own index',
    () =>
      withStore(async (schema, store) => {
        const endpointOf = async (accountId: string, i: number) =>
          store.createEndpoint({
            id: newId('ep'),
            accountId,
            url: `https://h${i}.example.com/hook`,
            events: ['click'],
            secret: 'whsec_plan',
            description: null,
            now: T0,
          });
        for (let i = 0; i < 8; i++) await endpointOf(i < 4 ? 'acct_a' : 'acct_b', i);
        // A's deliveries first, then B's: 1,500 events to four endpoints each.
        for (let i = 0; i < 1_500; i++) {
          const at = T0 + i;
          const accountId = i < 1_490 ? 'acct_a' : 'acct_b';
          const event = {
            id: newId('evt', at),
            accountId,
            name: 'click',
            body: new Uint8Array(2),
            createdAt: at,
          };
          await store.publish(event, () => newId('dlv', at));
        }
        // A platform's other endpoints, each holding a retry due an hour later (as after an outage
        // they shared): queued, not due, what a held-up claim must not read.
        await schemas.admin.query(
          `INSERT INTO "${schema}".endpoints (id, account_id, url, events, secret, created_at, updated_at)
           SELECT 'ep_idle_' || i, 'acct_idle_' || i / 4, 'https://idle' || i || '.example.com/hook',
                  '["click"]', 'whsec_plan', $1::bigint, $1::bigint
           FROM generate_series(1, ${IDLE_ENDPOINTS}) AS i`,
          [T0],
        );
        await schemas.admin.query(
          `INSERT INTO "${schema}".events (id, account_id, name, body, created_at)
           VALUES ('evt_idle', 'acct_idle_0', 'click', '\\x7b7d', $1::bigint)`,
          [T0],
        );
        await schemas.admin.query(
          `INSERT INTO "${schema}".deliveries (id, event_id, endpoint_id, account_id, event_name, status, attempts,
                                               next_attempt_at, created_at, updated_at)
           SELECT 'dlv_idle_' || i, 'evt_idle', 'ep_idle_' || i, 'acct_idle_' || i / 4, 'click', 'awaiting_retry', 1,
                  $1::bigint + 3600000 + i, $1::bigint, $1::bigint
           FROM generate_series(1, ${IDLE_ENDPOINTS}) AS i`,
          [T0],
        );
        await store.migrate(); // their next due times, from the rows written here
        await schemas.admin.query(
          `ANALYZE "${schema}".deliveries, "${schema}".endpoints, "${schema}".endpoint_due`,
        );
        const request = { now: T0 + 10_000, limit: 32, leaseMs: 60_000, perEndpointCap: 8 };
        const window = claimWindow(32);
        const held = {
          ...request,
          // A at the claimer's share: none of A's 5,960 due deliveries, all before B's, may be taken.
          shares: atShare('acct_a', 100),
        };
        await withPlans(schemas.admin, schema, async (plan) => {
          // Nothing held up: the walk stops at its window; the endpoints' reads never run.
          const open = await plan(CLAIM_DUE, claimParams(request));
          expect(indexRead(open, 'deliveries_due')).toBe(window);
          expect(indexRead(open, 'deliveries_queued_by_endpoint')).toBe(0);
          expect(indexRead(open, 'endpoint_due_by_time')).toBe(0);
          // Held up: the walk stops at its bound, the check past it reads it again and one more, and B's
          // four endpoints give their own from the per-endpoint index, a seek per status each. The
          // endpoints with something due are found by their next due time, one entry each (A's four,
          // passed over at its share, and B's four): the idle ones, their retries not due, are never
          // read.
          const past = await plan(CLAIM_DUE, claimParams(held));
          expect(indexRead(past, 'deliveries_due')).toBe(2 * claimWalk(window) + 1);
          expect(indexRead(past, 'endpoint_due_by_time')).toBe(8);
          const seeks = (node: typeof open) =>
            indexScans(node, 'deliveries_queued_by_endpoint', /endpoint_id = /).reduce(
              (loops, scan) => loops + scan['Actual Loops'],
              0,
            );
          expect(seeks(open)).toBe(0);
          expect(seeks(past)).toBe(4 * CLAIMABLE_STATUSES.length);
          expect(rowsRead(past, 'deliveries')).toBeLessThan(5_960);
          // (The same generic plan runs both; the endpoints read besides are the walk's, joined by
          // the planner's choice of a hash or lookups, whatever the claim.)
          expect(rowsRead(past, 'endpoints') - rowsRead(open, 'endpoints')).toBeLessThan(IDLE_ENDPOINTS / 10);
          // A at its share of each of its four origins instead: its endpoints left out alike, found
          // by the endpoints' index by account, not by reading every endpoint.
          const atOrigins = await plan(
            CLAIM_DUE,
            claimParams({
              ...request,
              shares: sharesOf(100, 100, [], [], {
                cap: 8,
                open: [0, 1, 2, 3].map((i) => [accountAtOrigin('acct_a', `https://h${i}.example.com`), 8]),
              }),
            }),
          );
          expect(indexRead(atOrigins, 'deliveries_due')).toBe(2 * claimWalk(window) + 1);
          expect(indexRead(atOrigins, 'endpoint_due_by_time')).toBe(8);
          expect(seeks(atOrigins)).toBe(4 * CLAIMABLE_STATUSES.length);
          expect(rowsRead(atOrigins, 'endpoints') - rowsRead(open, 'endpoints')).toBeLessThan(
            IDLE_ENDPOINTS / 10,
          );
          expect(indexRead(open, 'endpoint_due_pkey')).toBe(0);
          expect(indexRead(past, 'endpoint_due_pkey')).toBe(0);
          // The walk alone, which a claim runs first: the same window; held up, the walk and the
          // check past it, and nothing of the endpoints' reads.
          const walkOpen = await plan(CLAIM_WALK, claimParams(request).slice(0, WALK_PARAMS));
          expect(indexRead(walkOpen, 'deliveries_due')).toBe(window);
          const walkPast = await plan(CLAIM_WALK, claimParams(held).slice(0, WALK_PARAMS));
          expect(indexRead(walkPast, 'deliveries_due')).toBe(2 * claimWalk(window) + 1);
          expect(indexRead(walkPast, 'endpoint_due_by_time')).toBe(0);
          expect(seeks(walkPast)).toBe(0);
          // With the accounts in turn (design D77), from the start: no walk; the endpoints with
          // something due by their next due time, A's four and B's four, each giving its own from
          // its index.
          const turn = await plan(CLAIM_IN_TURN, turnParams({ ...request, after: '' }));
          expect(indexRead(turn, 'deliveries_due')).toBe(0);
          expect(indexRead(turn, 'endpoint_due_by_time')).toBe(8);
          expect(seeks(turn)).toBe(8 * CLAIMABLE_STATUSES.length);
          expect(rowsRead(turn, 'deliveries')).toBeLessThan(5_960);
          // And the endpoints after the cursor in account order, as many as the walk's bound, each
          // one's entry by key: A's, B's and the idle ones after them, whose retries are not due;
          // past them, once more to where that read stopped (the next endpoint's account, and the
          // last account before it).
          const walked = claimWalk(window);
          expect(indexRead(turn, 'endpoints_by_account')).toBeGreaterThan(2 * walked);
          expect(indexRead(turn, 'endpoints_by_account')).toBeLessThanOrEqual(2 * walked + 2);
          expect(indexRead(turn, 'endpoint_due_pkey')).toBe(walked);
          // With a cap as large as the batch, one endpoint can fill it: the turn reads each
          // account's first endpoint only (turnEndpointsPerAccount), of the eight entries it found.
          const one = await plan(CLAIM_IN_TURN, turnParams({ ...request, perEndpointCap: 32, after: '' }));
          expect(indexRead(one, 'endpoint_due_by_time')).toBe(8);
          expect(seeks(one)).toBe(2 * CLAIMABLE_STATUSES.length);
          // After a cursor in the middle: the same reads.
          const after = await plan(CLAIM_IN_TURN, turnParams({ ...request, after: 'acct_a' }));
          expect(indexRead(after, 'deliveries_due')).toBe(0);
          expect(indexRead(after, 'endpoint_due_by_time')).toBe(8);
          expect(seeks(after)).toBe(8 * CLAIMABLE_STATUSES.length);
          expect(indexRead(after, 'endpoints_by_account')).toBeLessThanOrEqual(2 * walked + 2);
          // Past the last account, from the first id on: the walk's bound in all, and nothing read
          // past it, as it stopped nowhere before the last account.
          const last = await plan(CLAIM_IN_TURN, turnParams({ ...request, after: 'acct_z' }));
          expect(indexRead(last, 'endpoints_by_account')).toBe(walked);
          expect(seeks(last)).toBe(8 * CLAIMABLE_STATUSES.length);
        });
        // Two of B's endpoints with a request in flight (another worker's): read apart, their entries
        // by key, among the endpoints in flight only, each kept for a due delivery no one holds (a
        // seek that finds one at the first status); the other two as before. Nothing more.
        await schemas.admin.query(
          `INSERT INTO "${schema}".leases (delivery_id, endpoint_id, token, expires_at)
           SELECT DISTINCT ON (endpoint_id) id, endpoint_id, 'elsewhere', $1::bigint
           FROM "${schema}".deliveries WHERE account_id = 'acct_b'
           ORDER BY endpoint_id, next_attempt_at LIMIT 2`,
          [request.now + 60_000],
        );
        await withPlans(schemas.admin, schema, async (plan) => {
          const open = await plan(CLAIM_DUE, claimParams(request));
          expect(indexRead(open, 'endpoint_due_pkey')).toBe(0);
          const past = await plan(CLAIM_DUE, claimParams(held));
          expect(indexRead(past, 'endpoint_due_pkey')).toBe(2);
          expect(indexRead(past, 'endpoint_due_by_time')).toBe(8);
          const seeks = indexScans(past, 'deliveries_queued_by_endpoint', /endpoint_id = /).reduce(
            (loops, scan) => loops + scan['Actual Loops'],
            0,
          );
          expect(seeks).toBe(4 * CLAIMABLE_STATUSES.length + 2);
        });
      }),
    60_000,
  );

  it.runIf(up)(
    'held up, reads no more of an endpoint’s own deliveries than its batch, however large the cap',
    () =>
      withStore(async (schema, store) => {
        // A's backlog, at the claimer's share, fills the walk; behind it four of B's endpoints with
        // 300 deliveries due each, and a per-endpoint cap of 1,000.
        const q = (sql: string) => schemas.admin.query(sql, [T0]);
        await q(`INSERT INTO "${schema}".endpoints (id, account_id, url, events, secret, created_at, updated_at)
                 SELECT 'ep_' || i, CASE WHEN i = 0 THEN 'acct_a' ELSE 'acct_b' END,
                        'https://h' || i || '.example.com/hook', '["click"]', 'whsec_plan', $1::bigint, $1::bigint
                 FROM generate_series(0, 4) AS i`);
        await q(`INSERT INTO "${schema}".events (id, account_id, name, body, created_at)
                 VALUES ('evt_cap', 'acct_a', 'click', '\\x7b7d', $1::bigint)`);
        const backlog = claimWalk(claimWindow(8)) + 20;
        await q(`INSERT INTO "${schema}".deliveries (id, event_id, endpoint_id, account_id, event_name, status,
                                                     attempts, next_attempt_at, created_at, updated_at)
                 SELECT 'dlv_a' || lpad(i::text, 5, '0'), 'evt_cap', 'ep_0', 'acct_a', 'click', 'pending', 0,
                        $1::bigint + i, $1::bigint, $1::bigint
                 FROM generate_series(0, ${backlog - 1}) AS i
                 UNION ALL
                 SELECT 'dlv_b' || lpad(i::text, 5, '0'), 'evt_cap', 'ep_' || 1 + i % 4, 'acct_b', 'click', 'pending', 0,
                        $1::bigint + 10000 + i, $1::bigint, $1::bigint
                 FROM generate_series(0, 1199) AS i`);
        await store.migrate();
        await schemas.admin.query(`ANALYZE "${schema}".deliveries, "${schema}".endpoint_due`);
        const request = {
          now: T0 + 20_000,
          limit: 8,
          leaseMs: 60_000,
          perEndpointCap: 1_000,
          shares: atShare('acct_a', 1_000),
        };
        await withPlans(schemas.admin, schema, async (plan) => {
          const claim = await plan(CLAIM_DUE, claimParams(request));
          expect(claim['Actual Rows']).toBe(request.limit);
          // B's four endpoints, a batch from each at most: reading up to the cap, each gave all 300.
          expect(indexRead(claim, 'deliveries_queued_by_endpoint')).toBe(4 * request.limit);
        });
      }),
    60_000,
  );

  it.runIf(up)(
    'walks past the deliveries in flight, more than a walk, instead of reading the endpoints one by one',
    () =>
      withStore(async (schema, store) => {
        // A busy platform: each of 600 endpoints with a request in flight (another worker's or
        // process's) and a second delivery due behind it; the ones in flight are the queue's first.
        const endpoints = 600;
        const q = (sql: string) => schemas.admin.query(sql, [T0]);
        await q(`INSERT INTO "${schema}".endpoints (id, account_id, url, events, secret, created_at, updated_at)
                 SELECT 'ep_' || i, 'acct_' || i % 60, 'https://h' || i || '.example.com/hook', '["click"]',
                        'whsec_plan', $1::bigint, $1::bigint
                 FROM generate_series(0, ${endpoints - 1}) AS i`);
        await q(`INSERT INTO "${schema}".events (id, account_id, name, body, created_at)
                 VALUES ('evt_busy', 'acct_0', 'click', '\\x7b7d', $1::bigint)`);
        await q(`INSERT INTO "${schema}".deliveries (id, event_id, endpoint_id, account_id, event_name, status,
                                                     attempts, next_attempt_at, created_at, updated_at)
                 SELECT 'dlv_' || lpad(i::text, 5, '0'), 'evt_busy', 'ep_' || i % ${endpoints},
                        'acct_' || i % ${endpoints} % 60, 'click', 'pending', 0, $1::bigint + i, $1::bigint, $1::bigint
                 FROM generate_series(0, ${2 * endpoints - 1}) AS i`);
        await q(`INSERT INTO "${schema}".leases (delivery_id, endpoint_id, token, expires_at)
                 SELECT 'dlv_' || lpad(i::text, 5, '0'), 'ep_' || i, 'elsewhere', $1::bigint + 3600000
                 FROM generate_series(0, ${endpoints - 1}) AS i`);
        await store.migrate(); // the endpoints' next due times
        await schemas.admin.query(
          `ANALYZE "${schema}".deliveries, "${schema}".leases, "${schema}".endpoint_due`,
        );
        const request = { now: T0 + 10 * endpoints, limit: 8, leaseMs: 60_000, perEndpointCap: 8 };
        const window = claimWindow(request.limit);
        expect(endpoints).toBeGreaterThan(claimWalk(window));
        await withPlans(schemas.admin, schema, async (plan) => {
          const claim = await plan(CLAIM_DUE, claimParams(request));
          expect(claim['Actual Rows']).toBe(request.limit);
          // Past every delivery in flight to its window; cut short at a walk's length, it read each
          // endpoint's next due time and its own index instead, a seek per status each.
          expect(indexRead(claim, 'deliveries_due')).toBe(endpoints + window);
          expect(indexRead(claim, 'endpoint_due_by_time')).toBe(0);
          expect(indexRead(claim, 'deliveries_queued_by_endpoint')).toBe(0);
        });
      }),
    60_000,
  );

  /**
   * A log of `due` claimable deliveries (two endpoints), then `run` with a plan made now, and a fill
   * of 20,000 delivered rows between its making and its reading (`grow`). The table is not analyzed
   * meanwhile (autovacuum off), as a connection keeps the plan it made on a young table until then.
   */
  const onYoungLog = (
    due: number,
    run: (
      store: ReturnType<typeof createPostgresStore>,
      plan: (
        sql: string,
        params: unknown[],
        grow: (client: pg.PoolClient) => Promise<void>,
      ) => Promise<PlanNode>,
    ) => Promise<void>,
  ) =>
    withStore(async (schema, store) => {
      await schemas.admin.query(`ALTER TABLE "${schema}".deliveries SET (autovacuum_enabled = false)`);
      for (let i = 0; i < 2; i++)
        await store.createEndpoint({
          id: `ep_young_${i}`,
          accountId: 'acct_young',
          url: `https://young${i}.example.com/hook`,
          events: ['click'],
          secret: 'whsec_plan',
          description: null,
          now: T0,
        });
      for (let i = 0; i < due / 2; i++) {
        const event = {
          id: newId('evt', T0 + i),
          accountId: 'acct_young',
          name: 'click',
          body: new Uint8Array(2),
          createdAt: T0 + i,
        };
        await store.publish(event, () => newId('dlv', T0 + i));
      }
      await withPlans(schemas.admin, schema, (plan) => run(store, plan));
    });
  const grow = async (client: pg.PoolClient) => {
    await client.query(
      `INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, attempts,
                               next_attempt_at, created_at, updated_at)
       SELECT 'dlv_old_' || lpad(i::text, 6, '0'), 'evt_old', 'ep_young_0', 'acct_young', 'click', 'delivered', 1,
              NULL, $1::bigint - 86400000, $1::bigint - 86400000
       FROM generate_series(1, 20000) AS i`,
      [T0],
    );
  };

  it.runIf(up)(
    'reads its deliveries by key with a plan made while the log was young, once it holds 20,000 rows',
    () =>
      onYoungLog(8, async (_store, plan) => {
        const claim = await plan(
          CLAIM_DUE,
          claimParams({ now: T0 + 10_000, limit: 32, leaseMs: 60_000, perEndpointCap: 8 }),
          grow,
        );
        expect(claim['Actual Rows']).toBe(8); // every due delivery claimed
        // A scan of the table would read all 20,008.
        expect(rowsRead(claim, 'deliveries')).toBeLessThan(100);
      }),
  );

  it.runIf(up)(
    'records attempts by key with a plan made while the log was young, once it holds 20,000 rows',
    () =>
      onYoungLog(8, async (store, plan) => {
        const claimed = await store.claimDue({
          now: T0 + 10_000,
          limit: 32,
          leaseMs: 60_000,
          perEndpointCap: 8,
        });
        expect(claimed).toHaveLength(8);
        const delivered = claimed.map((c) => answerResult(c, 200, T0 + 10_001));
        const record = await plan(RECORD_ATTEMPTS_FAST, recordParams(delivered).params, grow);
        expect(record['Actual Rows']).toBe(8); // every attempt applied
        expect(rowsRead(record, 'deliveries')).toBeLessThan(100);
      }),
  );

  it.runIf(up)('probes an endpoint behind its own backlog with a seek per status, reading a row each', () =>
    withStore(async (schema, store) => {
      // A hanging endpoint's backlog (design D27): 3,000 new deliveries due, 200 retries due after them.
      const q = (sql: string) => schemas.admin.query(sql, [T0]);
      await q(`INSERT INTO "${schema}".endpoints (id, account_id, url, events, secret, created_at, updated_at)
               VALUES ('ep_hanging', 'acct_a', 'https://hanging.example.com/hook', '["click"]', 'whsec_plan',
                       $1::bigint, $1::bigint)`);
      await q(`INSERT INTO "${schema}".events (id, account_id, name, body, created_at)
               VALUES ('evt_probe', 'acct_a', 'click', '\\x7b7d', $1::bigint)`);
      await q(`INSERT INTO "${schema}".deliveries (id, event_id, endpoint_id, account_id, event_name, status,
                                                   attempts, next_attempt_at, created_at, updated_at)
               SELECT 'dlv_' || lpad(i::text, 5, '0'), 'evt_probe', 'ep_hanging', 'acct_a', 'click',
                      CASE WHEN i < 3000 THEN 'pending' ELSE 'awaiting_retry' END,
                      CASE WHEN i < 3000 THEN 0 ELSE 1 END, $1::bigint + i, $1::bigint, $1::bigint
               FROM generate_series(0, 3199) AS i`);
      await store.migrate();
      await schemas.admin.query(`ANALYZE "${schema}".deliveries, "${schema}".leases`);
      await withPlans(schemas.admin, schema, async (plan) => {
        const probe = await plan(CLAIM_PROBES, [T0 + 10_000, ['ep_hanging'], PROBE_ORDER, 60_000]);
        expect(probe['Actual Rows']).toBe(1);
        expect(indexRead(probe, 'deliveries_queued_by_endpoint')).toBe(1);
        expect(indexRead(probe, 'deliveries_due')).toBe(0);
        expect(rowsRead(probe, 'deliveries')).toBeLessThanOrEqual(2);
      });
    }),
  );
});
