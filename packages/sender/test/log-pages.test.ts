/**
 * A page of the delivery log reads what it shows, whatever lies between (log-page-sql.ts): on
 * SQLite each status's range of the account's or endpoint's index, never a scan; on PostgreSQL,
 * under the generic plan the store runs, a page of three failed deliveries among 40,000 delivered
 * reads those three, a page of the whole log at most a page from each status, and a page filtered
 * by event at most a window (EVENT_SCAN) of each.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DELIVERY_STATUSES } from '../src/domain/delivery-state.js';
import { EVENT_SCAN, eventPage } from '../src/store/log-page-sql.js';
import type { DeliveryFilter } from '../src/store/port.js';
import * as pgLog from '../src/store/postgres/delivery-log.js';
import type { Row } from '../src/store/rows.js';
import * as sqliteLog from '../src/store/sqlite/delivery-log.js';
import { genericPlan, type PlanNode, rowsRead } from './helpers/pg-plans.js';
import { pgSchemas } from './helpers/pg-schemas.js';
import { PG_URL, requireService } from './helpers/services.js';
import { withSqlitePlans } from './helpers/sqlite-plans.js';

const dir = mkdtempSync(join(tmpdir(), 'linkhooks-log-pages-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every filter a page can have but a search (read by event: log-search.test.ts), cursor or not. */
const FILTERS: Omit<DeliveryFilter, 'limit'>[] = (
  [
    {},
    { status: 'failed' },
    { endpointId: 'ep' },
    { endpointId: 'ep', status: 'failed' },
    { event: 'click' },
    { endpointId: 'ep', status: 'delivered', event: 'click' },
  ] as Omit<DeliveryFilter, 'limit'>[]
).flatMap((f) => [f, { ...f, cursor: 'dlv_9' }]);

describe('sqlite', () => {
  it('reads each status range of the index a page names, and never scans the log', async () => {
    // What ANALYZE finds in a large log: a million deliveries, 100,000 an account, 10,000 an
    // endpoint, a sixth of those a status.
    const stats: [string, string, string][] = [
      ['deliveries', 'deliveries_by_account', '1000000 100000 16000 1'],
      ['deliveries', 'deliveries_by_endpoint', '1000000 10000 1600 1'],
      ['deliveries', 'deliveries_by_event', '1000000 8'],
    ];
    await withSqlitePlans(
      dir,
      (plan) => {
        for (const filter of FILTERS) {
          const text = plan(sqliteLog.listSql({ ...filter, limit: 20 }), {
            accountId: 'acct',
            endpointId: 'ep',
            status: 'failed',
            event: 'click',
            cursor: 'dlv_9',
            limit: 21,
          });
          expect(text, JSON.stringify(filter)).not.toMatch(/\bSCAN deliveries\b/);
          // Each range read in the index's order, never gathered and sorted.
          expect(text, JSON.stringify(filter)).not.toMatch(/SEARCH deliveries [^\n]*\nUSE TEMP B-TREE/);
          const index = filter.endpointId ? 'deliveries_by_endpoint' : 'deliveries_by_account';
          const key = filter.endpointId ? 'endpoint_id' : 'account_id';
          const range = new RegExp(
            `SEARCH deliveries USING INDEX ${index} \\(${key}=\\? AND status=\\?${filter.cursor ? ' AND id<\\?' : ''}\\)`,
            'g',
          );
          expect(text.match(range), `${JSON.stringify(filter)}\n${text}`).toHaveLength(
            filter.status ? 1 : DELIVERY_STATUSES.length,
          );
          // The endpoint is the account's, checked by key once before its ranges are read.
          if (filter.endpointId) {
            expect(text).toMatch(
              /SEARCH endpoints USING (COVERING )?INDEX sqlite_autoindex_endpoints_1 \(id=\?\)/,
            );
            expect(text).not.toMatch(/CORRELATED/);
          }
        }
      },
      stats,
    );
  });
});

const pgUp = await requireService('PostgreSQL', PG_URL);
describe.runIf(pgUp)('postgres', () => {
  const schemas = pgSchemas('lh_pages');
  const { admin } = schemas;
  afterAll(schemas.drop);

  // Alone, acct holds the table and ep most of it: the generic plan's guesses of an account's,
  // an endpoint's and a status's rows are then furthest from what a filtered page finds.
  it.each([
    ['beside 300 other accounts', 300],
    ['alone', 0],
  ])(
    'reads a page of what it shows among 40,000 deliveries of another status, %s (EXPLAIN ANALYZE)',
    async (_, others) => {
      const schema = await schemas.migrated();
      // Committed, in a schema of its own: genericPlan runs each statement in a transaction it rolls
      // back. The connection is dropped after (genericPlan changes its plan cache mode and JIT, for
      // the page read after it too).
      const client = await admin.connect();
      try {
        await client.query(`SET search_path = "${schema}"`);
        // What the store sets in each page's transaction (ORDERED_RANGES), for this connection.
        await client.query(pgLog.ORDERED_RANGES.replace(' LOCAL', ''));
        // acct: 40,000 clicks a second apart to ep, the oldest three failed, the rest delivered, and
        // two newer ones pending to ep2; `others` other accounts' endpoints, delivered, in between.
        // A filter's rows sit at either end of a log of delivered ones.
        await client.query(
          `
        INSERT INTO endpoints (id, account_id, url, events, secret, created_at, updated_at)
        SELECT e, a, 'https://r.example.com/' || e, '["click"]'::jsonb, 'whsec_x', 0, 0
        FROM (VALUES ('ep', 'acct'), ('ep2', 'acct')) v(e, a)
        UNION ALL SELECT 'x' || n, 'o' || n, 'https://r.example.com/x', '["click"]', 'whsec_x', 0, 0
        FROM generate_series(1, $1::int) n`,
          [others],
        );
        await client.query(
          `
        INSERT INTO events (id, account_id, name, body, created_at)
        SELECT 'evt_' || lpad(g::text, 7, '0'), 'acct', 'click', '\\x7b7d'::bytea, g::bigint * 1000
        FROM generate_series(1, 40000) g
        UNION ALL SELECT 'evt_' || lpad(g::text, 7, '0') || 'o', 'o' || (1 + g % $1::int), 'click',
                         '\\x7b7d'::bytea, g::bigint * 1000 + 500
        FROM generate_series(1, 40000, 6) g WHERE $1::int > 0
        UNION ALL SELECT 'evt_' || g, 'acct', 'click', '\\x7b7d'::bytea, g::bigint * 1000
        FROM generate_series(41000, 41001) g`,
          [others],
        );
        await client.query(`
        INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, created_at, updated_at)
        SELECT 'dlv_' || substr(id, 5), id,
               CASE WHEN account_id <> 'acct' THEN 'x' || substr(account_id, 2)
                    WHEN created_at >= 41000000 THEN 'ep2' ELSE 'ep' END,
               account_id, 'click',
               CASE WHEN account_id <> 'acct' THEN 'delivered' WHEN created_at <= 3000 THEN 'failed'
                    WHEN created_at >= 41000000 THEN 'pending' ELSE 'delivered' END,
               created_at, created_at
        FROM events`);
        for (const table of ['events', 'deliveries']) await client.query(`ANALYZE ${table}`);
        const limit = 20;
        const shown = async (filter: Omit<DeliveryFilter, 'limit'>, account = 'acct') => {
          const { text, values } = pgLog.listQuery(account, { ...filter, limit });
          const plan: PlanNode = await genericPlan(client, text, values);
          const rows = (await client.query(text, values)).rows as { id: string; status: string }[] & Row[];
          return { plan, rows, read: rowsRead(plan, 'deliveries') };
        };
        // Another account's page by acct's endpoint reads none of its 40,000 deliveries.
        for (const filter of [{ endpointId: 'ep' }, { endpointId: 'ep', event: 'click' }] as const) {
          const { plan, rows, read } = await shown(filter, 'o1');
          expect(rows.filter((r) => r.id !== null)).toEqual([]);
          expect(read, JSON.stringify(plan)).toBe(0);
        }
        for (const filter of [{ status: 'failed' }, { status: 'failed', endpointId: 'ep' }] as const) {
          const { plan, rows, read } = await shown(filter);
          expect(rows.map((r) => r.id)).toEqual(['dlv_0000003', 'dlv_0000002', 'dlv_0000001']);
          expect(read, JSON.stringify(plan)).toBe(3);
        }
        const pending = await shown({ status: 'pending', endpointId: 'ep2' });
        expect(pending.rows.map((r) => r.id)).toEqual(['dlv_41001', 'dlv_41000']);
        expect(pending.read).toBe(2);
        // The whole log: a page from each status's range at most, merged newest first.
        for (const filter of [
          {},
          { endpointId: 'ep' },
          { cursor: 'dlv_0020000' },
          { status: 'delivered' },
        ] as const) {
          const { plan, rows, read } = await shown(filter);
          expect(rows).toHaveLength(limit + 1);
          expect(rows.map((r) => r.id)).toEqual(
            rows
              .map((r) => r.id)
              .sort()
              .reverse(),
          );
          expect(JSON.stringify(plan)).not.toMatch(/Seq Scan|Bitmap/);
          expect(read, JSON.stringify(plan)).toBeLessThanOrEqual(DELIVERY_STATUSES.length * (limit + 1));
        }
        // By event, which no index orders: a window of each range, however far the event lies.
        for (const [filter, items, more] of [
          [{ event: 'conversion' }, 0, true],
          [{ event: 'conversion', endpointId: 'ep', cursor: 'dlv_0020000' }, 0, true],
          [{ event: 'click', status: 'failed' }, 3, false],
          [{ event: 'click' }, limit, true],
        ] as const) {
          const { plan, rows, read } = await shown(filter);
          const page = eventPage(rows, limit);
          expect(page.items, JSON.stringify(filter)).toHaveLength(items);
          expect(page.nextCursor !== null, JSON.stringify(filter)).toBe(more);
          expect(JSON.stringify(plan)).not.toMatch(/Seq Scan|Bitmap/);
          expect(read, JSON.stringify(plan)).toBeLessThanOrEqual(DELIVERY_STATUSES.length * EVENT_SCAN);
        }
      } finally {
        client.release(true);
      }
    },
  );
});
